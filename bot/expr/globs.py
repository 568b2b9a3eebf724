"""Doublestar globs over repository paths: a syntax check and a compiled set matcher.

Semantics, pinned (docs/plan.md has the table; tests/expr/test_globs.py checks it, with the cases of
bmatcuk/doublestar v4's test table):
- paths are relative, `/`-separated, matched whole and case-sensitively;
- `**` as a whole segment matches any number of segments, zero included: `**/x` matches `x`,
  `a/**` matches `a` and everything below it, `a/**/b` matches `a/b`; elsewhere `**` is `*`;
- `*` matches any run of characters within one segment, `?` exactly one; `[abc]`, `[a-z0-9]`,
  `[^x]`/`[!x]` match one character of a segment, never `/`; `\\` escapes the next character;
- `{a,b}` alternatives, nested, may hold `/` and `**`; `}` and `,` outside braces are literal;
- dotfiles are not special (`*` matches `.github`, `**` crosses `.github/`);
- errors (never a silent literal): unclosed `[` or `{`, an empty `[]`, a backwards range, a `/`
  inside `[...]`, a trailing `\\`, a leading or trailing `/`, more than 256 brace alternatives,
  a pattern over 1024 characters.

Speed: a plan matches thousands of paths against hundreds of patterns. `GlobSet` indexes the
patterns the way ripgrep's globset does — by whole path, by file name, by extension and by
literal leading directories — so a path meets only the patterns that could match it, and the
common shapes (`**/*.py`, `docs/**`, `Makefile`) need no regex at all. The regexes that remain
use atomic groups so that no pattern can make matching backtrack badly (`*a*a*a*b`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import cast

from bot.expr.glob_parse import (
    ANY,
    STAR,
    CharClass,
    GlobSyntaxError,
    Lit,
    Segment,
    Token,
    expand,
    parse,
    segments,
    split,
)

__all__ = ["GlobSet", "GlobSyntaxError", "compiled_globs", "glob_syntax_error", "glob_match"]


def glob_syntax_error(pattern: str) -> str | None:
    """None for a valid glob, else what is wrong and where ("unclosed '[' at offset 3")."""
    try:
        parse(pattern)
    except GlobSyntaxError as error:
        return str(error)
    return None


def _token_regex(token: Token) -> str:
    if isinstance(token, Lit):
        return re.escape(token.char)
    if token == ANY:
        return "[^/]"
    if isinstance(token, CharClass):
        body = "".join(re.escape(lo) if lo == hi else f"{re.escape(lo)}-{re.escape(hi)}" for lo, hi in token.ranges)
        if token.negated:
            return f"[^/{body}]"
        # `/` is never a member, but a range may span it (`[.-0]`): a class stays in its segment.
        return f"(?!/)[{body}]" if any(lo < "/" < hi for lo, hi in token.ranges) else f"[{body}]"
    raise AssertionError(token)


def _segment_regex(segment: tuple[Token, ...]) -> str:
    """Stars split a segment into fixed-width chunks; every chunk but the last is found at its
    earliest place inside an atomic group (as fnmatch does), so matching stays linear."""
    parts = ["".join(map(_token_regex, chunk)) for chunk in split(segment, STAR)]
    if len(parts) == 1:
        return parts[0]
    middle = "".join(f"(?>[^/]*?{part})" for part in parts[1:-1])
    return f"{parts[0]}{middle}[^/]*{parts[-1]}"


def _chunk(segs: Sequence[tuple[Token, ...]]) -> str:
    return "/".join(_segment_regex(seg) for seg in segs)


def _alternative_regex(segs: list[Segment]) -> str:
    """Segments between globstars are fixed in count, so each run but the last is likewise taken
    at its earliest place (atomic); the last one must end the path."""
    runs = cast(list[list[tuple[Token, ...]]], split(segs, None))  # the globstars are cut out
    head, *rest = runs
    out = _chunk(head)
    for index, run in enumerate(rest):
        lead = "/" if out else ""
        if not run:  # a trailing globstar: zero or more segments
            out += "(?:/.*)?" if out else ".*"
        elif index == len(rest) - 1:
            out += f"{lead}(?:.*/)?{_chunk(run)}"
        else:  # the lookahead keeps the earliest place from stopping inside a segment
            out += f"{lead}(?>(?:[^/]*/)*?{_chunk(run)}(?=/|$))"
    return out


def _literal(seg: tuple[Token, ...]) -> str | None:
    if all(isinstance(t, Lit) for t in seg):
        return "".join(t.char for t in seg)  # type: ignore[union-attr]
    return None


# An index entry: (pattern index, needle, regex). regex None: the key alone proves the match;
# needle: literal text every matching path contains, a cheap test before the regex ("" if none).
_Entry = tuple[int, str, "re.Pattern[str] | None"]


def _suffix(seg: tuple[Token, ...]) -> str:
    """The literal characters that end a segment (`test_*.py` → ".py")."""
    chars: list[str] = []
    for token in reversed(seg):
        if not isinstance(token, Lit):
            break
        chars.append(token.char)
    return "".join(reversed(chars))


def _prefix(seg: tuple[Token, ...]) -> str:
    """The literal characters that start a segment (`test_*.py` → "test_")."""
    chars: list[str] = []
    for token in seg:
        if not isinstance(token, Lit):
            break
        chars.append(token.char)
    return "".join(chars)


def _needle(segs: list[Segment]) -> str:
    """The longest run of literal characters within one segment."""
    runs = [""]
    for seg in segs:
        runs.append("")
        for token in seg or ():
            if isinstance(token, Lit):
                runs[-1] += token.char
            else:
                runs.append("")
    return max(runs, key=len)


class GlobSet:
    """Many globs compiled once; `matching(path)` names every pattern that matches, in one pass.

    Each brace alternative is filed under the most telling key it has: the whole path (no
    wildcard), the file name (`**/Makefile`), the literal leading directories (`src/api/**`),
    the extension (`**/*.py`), the start of the file name (`**/test_*`), else under "always".
    A path meets only the entries under its own name, directories, extension and name's start.
    Patterns must be valid (`glob_syntax_error` is None); an invalid one raises GlobSyntaxError.
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        self._exact: dict[str, list[int]] = {}
        self._by_name: dict[str, list[_Entry]] = {}
        self._by_dir: dict[str, list[_Entry]] = {}
        self._by_ext: dict[str, list[_Entry]] = {}
        self._by_name_start: dict[str, list[_Entry]] = {}
        self._name_starts: list[int] = []  # the lengths of those keys, longest last
        self._always: list[_Entry] = []
        for index, pattern in enumerate(self.patterns):
            for tokens in expand(parse(pattern)):
                self._add(index, segments(tokens))

    def _add(self, index: int, segs: list[Segment]) -> None:
        literals = [None if seg is None else _literal(seg) for seg in segs]
        if None not in literals:
            self._exact.setdefault("/".join(literals), []).append(index)  # type: ignore[arg-type]
            return
        regex = re.compile(_alternative_regex(segs), re.DOTALL)
        entry: _Entry = (index, _needle(segs), regex)
        proven: _Entry = (index, "", None)
        last = segs[-1]
        anywhere = len(segs) == 2 and segs[0] is None  # `**/<last segment>`
        if last is not None and literals[-1] is not None:
            self._by_name.setdefault(literals[-1], []).append(proven if anywhere else entry)
            return
        lead: list[str] = []
        for literal in literals:
            if literal is None:
                break
            lead.append(literal)
        if lead:
            exact_tree = len(lead) == len(segs) - 1 and last is None  # `dir/sub/**`
            self._by_dir.setdefault("/".join(lead), []).append(proven if exact_tree else entry)
            return
        suffix = _suffix(last) if last is not None else ""
        if "." in suffix:
            ext = suffix.rpartition(".")[2]
            any_name = anywhere and last == (STAR, *(Lit(c) for c in suffix)) and suffix == "." + ext
            self._by_ext.setdefault(ext, []).append(proven if any_name else entry)
            return
        start = _prefix(last) if last is not None else ""
        if start:
            self._by_name_start.setdefault(start, []).append(entry)
            self._name_starts = sorted({*self._name_starts, len(start)})
            return
        self._always.append(proven if segs == [None] else entry)

    def _candidates(self, path: str) -> list[_Entry]:
        name = path.rpartition("/")[2]
        found = self._by_name.get(name, [])
        if self._by_dir:
            start = 0
            while True:
                cut = path.find("/", start)
                found = found + self._by_dir.get(path if cut < 0 else path[:cut], [])
                if cut < 0:
                    break
                start = cut + 1
        if "." in name:
            found = found + self._by_ext.get(name.rpartition(".")[2], [])
        for length in self._name_starts:
            if length > len(name):
                break
            found = found + self._by_name_start.get(name[:length], [])
        return found + self._always if self._always else found

    def matching(self, path: str) -> list[int]:
        """Indices of every pattern that matches `path`, ascending."""
        found = set(self._exact.get(path, ()))
        for index, needle, regex in self._candidates(path):
            if index not in found and (regex is None or (needle in path and regex.fullmatch(path))):
                found.add(index)
        return sorted(found)

    def any(self, path: str) -> bool:
        if path in self._exact:
            return True
        for _, needle, regex in self._candidates(path):
            if regex is None or (needle in path and regex.fullmatch(path)):
                return True
        return False


@lru_cache(maxsize=256)
def compiled_globs(patterns: tuple[str, ...]) -> GlobSet:
    """A GlobSet per distinct pattern list: configurations come back on every pull request."""
    return GlobSet(patterns)


def glob_match(pattern: str, path: str) -> bool:
    """One pattern against one path (tests, the occasional single check)."""
    return compiled_globs((pattern,)).any(path)
