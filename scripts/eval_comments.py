"""Comments in source files, for scripts/eval_repos.py: which lines are comments (and where a code
line's trailing comment starts), the comments a file holds, and a fix's change to a file with the
comments the fix added taken out.

A fix usually explains itself in a comment ("Copy to avoid mutating the caller's array"). A case
built from it keeps the fix's code in its base and takes it away in its head; if the base kept the
fix's comment too, the head would delete it, and the deletion would state the bug: the answer
handed over. So the base is the fix's code with the comments as the fix's parent had them.

The lexers are small and line-based: C-like languages (Go, Rust, JavaScript, TypeScript, Java:
`//`, `/* */`, and strings in ', " and `) and Python (`#`, strings with one or three quotes). They
know strings well enough not to take `"http://x"` or `'#'` for a comment; a regular-expression
literal holding a quote can fool them, which the mining's own check (no comment of the fix left in
the base or the head) would then report.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass

C_LIKE = ("Go", "Rust", "JavaScript", "TypeScript", "Java")
PYTHON = ("Python",)
_RUST_CHAR = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'")
_PY_STRING = re.compile(r"(?i)(?:[rbfu]{0,2})('''|\"\"\"|'|\")")


@dataclass(frozen=True)
class Line:
    code: bool  # holds something that is not a comment (and not only blanks)
    comment: str  # the comment text on the line, markers taken out, blanks collapsed ("" for none)
    trailing: int | None = None  # where a comment after code starts (its column), else None

    @property
    def comment_only(self) -> bool:
        return bool(self.comment) and not self.code


class _Lines:
    """What a lexer records, line by line."""

    def __init__(self) -> None:
        self.out: list[Line] = []
        self.code = False
        self.comment: list[str] = []
        self.trailing: int | None = None
        self.column = 0

    def newline(self) -> None:
        text = " ".join(" ".join(self.comment).split())
        self.out.append(Line(self.code, text, self.trailing if self.code else None))
        self.code, self.comment, self.trailing, self.column = False, [], None, 0

    def mark_code(self) -> None:
        """Code on the line; after a comment, that comment was not a trailing one."""
        self.code, self.trailing = True, None

    def start_comment(self) -> None:
        if self.code and self.trailing is None:
            self.trailing = self.column


_MULTILINE = {"Rust": ('"',), "Go": ("`",), "JavaScript": ("`",), "TypeScript": ("`",), "Java": ('"""',)}


def _c_like(text: str, language: str) -> list[Line]:
    lines, i, n = _Lines(), 0, len(text)
    depth = 0  # in a block comment (Rust nests them)
    quote, raw = "", False  # in a string: its closing quote, and whether a backslash escapes nothing
    while i < n:
        ch = text[i]
        if ch == "\n":
            if quote and not raw and quote not in _MULTILINE[language]:
                quote = ""  # an unterminated string ends with its line
            lines.newline()
            i += 1
            continue
        lines.column = i - (text.rfind("\n", 0, i) + 1)
        if depth:
            i, depth = _in_block(text, i, depth, language, lines)
            continue
        if quote:
            if ch == "\\" and not raw:
                i += 2 if i + 1 < n and text[i + 1] != "\n" else 1
            elif text.startswith(quote, i):
                i += len(quote)
                quote = ""
            else:
                i += 1
            lines.mark_code()
            continue
        if text.startswith("//", i):
            lines.start_comment()
            end = text.find("\n", i)
            end = n if end < 0 else end
            lines.comment.append(text[i + 2:end].lstrip("/!"))
            i = end
            continue
        if text.startswith("/*", i):
            lines.start_comment()
            depth, i = 1, i + 2
            continue
        if not ch.isspace():
            lines.mark_code()
        if language == "Rust" and ch == "'":
            match = _RUST_CHAR.match(text, i)
            i = match.end() if match else i + 1  # not a character: a lifetime
            continue
        opening = re.match(r'r(#*)"', text[i:i + 40]) if language == "Rust" and not _ident(text, i) else None
        if opening:
            quote, raw, i = '"' + opening[1], True, i + opening.end()
            continue
        if language == "Java" and text.startswith('"""', i):
            quote, raw, i = '"""', False, i + 3
            continue
        if ch in "'\"`":
            quote, raw, i = ch, ch == "`" and language == "Go", i + 1
            continue
        i += 1
    lines.newline()
    return lines.out


def _in_block(text: str, i: int, depth: int, language: str, lines: _Lines) -> tuple[int, int]:
    """Reads a block comment up to its end, the line's end or (in Rust) a nested opening."""
    marks = [m for m in (text.find("*/", i), text.find("\n", i), text.find("/*", i) if language == "Rust" else -1)
             if m >= 0]
    at = min(marks) if marks else len(text)
    lines.comment.append(text[i:at].strip(" \t*"))
    if text.startswith("*/", at):
        return at + 2, depth - 1
    if text.startswith("/*", at):
        return at + 2, depth + 1
    return at, depth


def _ident(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def _python(text: str) -> list[Line]:
    lines, i, n = _Lines(), 0, len(text)
    quote = ""
    while i < n:
        ch = text[i]
        if ch == "\n":
            if quote in ("'", '"'):
                quote = ""
            lines.newline()
            i += 1
            continue
        lines.column = i - (text.rfind("\n", 0, i) + 1)
        if quote:
            if ch == "\\":
                i += 2 if i + 1 < n and text[i + 1] != "\n" else 1
            elif text.startswith(quote, i):
                i += len(quote)
                quote = ""
            else:
                i += 1
            lines.mark_code()
            continue
        if ch == "#":
            lines.start_comment()
            end = text.find("\n", i)
            end = n if end < 0 else end
            lines.comment.append(text[i + 1:end])
            i = end
            continue
        match = _PY_STRING.match(text, i)
        if match and not _ident(text, i):
            quote = match[1]
            lines.mark_code()
            i = match.end()
            continue
        if not ch.isspace():
            lines.mark_code()
        i += 1
    lines.newline()
    return lines.out


def classify(text: str, language: str) -> list[Line]:
    """One Line per line of `text` (a final line without a newline counted)."""
    if language in PYTHON:
        found = _python(text)
    elif language in C_LIKE:
        found = _c_like(text, language)
    else:
        raise ValueError(f"no comment lexer for {language}")
    return found[:len(text.splitlines())] if text else []


def digest(comment: str) -> str:
    """A comment, named without being quoted (the audit keeps no code of the repositories)."""
    return hashlib.sha256(comment.encode("utf-8")).hexdigest()[:16]


def comments(text: str, language: str) -> set[str]:
    """The comments a file holds, by digest."""
    return {digest(line.comment) for line in classify(text, language) if line.comment}


def without_added_comments(old: str, new: str, language: str) -> str:
    """`new` (the fix's version of a file) with the comments it added taken out and those of `old`
    (the parent's) it removed or rewrote put back where they were, next to the code they stood
    beside: the fix's code with its parent's comments."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    old_info, new_info = classify(old, language), classify(new, language)
    known = {line.comment for line in old_info if line.comment}
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += new_lines[j1:j2]
            continue
        code = [j for j in range(j1, j2) if not new_info[j].comment_only]
        kept = _old_comments(old_lines[i1:i2], old_info[i1:i2], len(code))
        for rank, j in enumerate(code):
            out += kept.pop(rank, [])
            out.append(_without_trailing(new_lines[j], new_info[j], known))
        out += [line for rank in sorted(kept) for line in kept[rank]]
    return "".join(out)


def _old_comments(lines: list[str], info: list[Line], new_code: int) -> dict[int, list[str]]:
    """The comment lines of a changed stretch of the parent, each at the rank of the new code line
    it goes before: its place among the old code lines, scaled to the new ones."""
    old_code = sum(1 for line in info if not line.comment_only)
    placed: dict[int, list[str]] = {}
    seen = 0
    for text, line in zip(lines, info, strict=True):
        if line.comment_only:
            rank = round(seen * new_code / old_code) if old_code else 0
            placed.setdefault(rank, []).append(text)
        else:
            seen += 1
    return placed


def _without_trailing(text: str, line: Line, known: set[str]) -> str:
    """A code line without a trailing comment its file did not have before."""
    if line.trailing is None or line.comment in known:
        return text
    ending = text[len(text.rstrip("\r\n")):]
    return text[:line.trailing].rstrip() + ending
