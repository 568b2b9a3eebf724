"""A source file as text: comments and strings blanked, import lines, where a definition ends
(bench/context_truth.py says the rules). One lexer for every language, with each language's quirks
(Python's `#` and triple quotes, Rust's raw strings and lifetimes, Go's and JavaScript's backticks)."""

from __future__ import annotations

import ast
import re

from truth.model import FUNCTION_KINDS

IMPORT = re.compile(r"^\s*(import\b|from\s+\S+\s+import\b|export\s+(\*|\{[^}]*\}|type\s+\{[^}]*\})\s+from\b|"
                    r"pub(\([^)]*\))?\s+use\b|use\b|(var|let|const)\s+[\w{}\s,]+=\s*require\(|package\b)")
REEXPORT = re.compile(r"^\s*(?:(?:module\.)?exports(?:\.[\w$]+)?\s*=\s*)+[\w$]+\s*;?\s*$")
ALIAS = re.compile(r"^\s*(var|let|const)\s+[\w$]+\s*=\s*[A-Za-z_$][\w$]*(\.[\w$]+)+\s*;?\s*$")  # `var join = path.join;`


_STRING = re.compile(r'"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`|\'(?:\\.|[^\'\\])*\'')


def code_of(line: str, lang: str | None) -> str:
    """The line without its strings and end-of-line comment (good enough for one line)."""
    if lang == "rust":
        line = re.sub(r"'[A-Za-z_]\w*\b(?!')", " ", line)  # lifetimes, not quotes
    line = _STRING.sub('""', line)
    marker = "#" if lang == "python" else "//"
    if marker in line:
        line = line[:line.index(marker)]
    stripped = line.strip()
    if stripped.startswith(("*", "/*")) and lang != "python":
        return ""
    return line


def strip_file(text: str, lang: str | None) -> list[str]:
    """The file's lines with comments and strings blanked (multi-line ones too), so that a word
    inside a doc comment, a template or a raw string (a shell script in Go) is not a use."""
    out: list[str] = []
    chars = list(text)
    i, n = 0, len(chars)
    hash_comment = lang == "python"
    while i < n:
        c = chars[i]
        two = text[i:i + 2]
        if (two == "//" and not hash_comment) or (c == "#" and hash_comment):
            while i < n and chars[i] != "\n":
                chars[i] = " "
                i += 1
            continue
        if two == "/*" and not hash_comment:
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for k in range(i, end):
                if chars[k] != "\n":
                    chars[k] = " "
            i = end
            continue
        quote = None
        if text.startswith(('"""', "'''"), i) and lang in ("python", "java"):
            quote = text[i:i + 3]
        elif lang == "rust" and re.match(r'r#*"', text[i:i + 8]) and (i == 0 or not text[i - 1].isalnum()):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            quote = '"' + hashes
            for k in range(i, i + 1 + len(hashes)):
                chars[k] = " "
            i += 1 + len(hashes)
        elif c == "'" and lang == "rust":
            literal = re.match(r"'(\\.[^']*|[^\\'])'", text[i:i + 12])
            if literal is None:  # a lifetime
                i += 1
                continue
            quote = "'"
        elif c in "\"'" or (c == "`" and lang in ("javascript", "typescript", "go")):
            quote = c
        if quote is None:
            i += 1
            continue
        j = i + len(quote)
        while j < n and not text.startswith(quote, j):
            if chars[j] == "\\" and lang != "go" or (chars[j] == "\\" and quote != "`"):
                j += 1
            elif chars[j] == "\n" and len(quote) == 1 and quote not in "`" and lang != "rust":
                break  # an unterminated one-line string: stop at the line's end
            j += 1
        end = min(n, j + len(quote))
        for k in range(i + 1, end - 1):
            if chars[k] != "\n":
                chars[k] = " "
        i = end
    out = "".join(chars).split("\n")
    return out


def import_lines(text: str, lang: str | None) -> set[int]:
    """Lines of import and re-export statements (multi-line ones whole): a use there is not a call."""
    lines = text.split("\n")
    out: set[int] = set()
    if lang == "python":
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return out
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        return out
    start = None
    for number, line in enumerate(lines, 1):
        if start is None and (IMPORT.match(line) or REEXPORT.match(line) or re.match(
                r"^\s*(import\b|export\s+(type\s+)?\{|export\s+\*|pub(\([^)]*\))?\s+use\b|use\b)", line)):
            start = number
        if start is not None:
            out.add(number)
            code = code_of(line, lang)
            opened = any(c in code for c in "({") and not any(c in code for c in ")}")
            if lang == "go" and re.match(r"^\s*import\s*\($", line):
                continue
            if lang == "go" and start != number and line.strip() != ")":
                continue
            if (number == start and opened) or (number > start and not re.search(
                    r"(\bfrom\s*['\"]|[;)}]\s*$|\}\s*from\b|\)\s*$)", code)):
                continue
            start = None
    if lang in ("javascript", "typescript"):
        out |= _object_imports(lines)
    return out


_NAMES_OPEN = re.compile(r"^\s*((var|let|const)\s*|module\.exports\s*=\s*)\{\s*$")
_NAME_LINE = re.compile(r"^\s*[\w$]+\s*(:\s*[\w$]+\s*)?,?\s*$")


def _object_imports(lines: list[str]) -> set[int]:
    """CommonJS imports and re-exports written over several lines, one name a line:
    `const {\n  a,\n  b\n} = require('./x')` and `module.exports = {\n  a,\n  b\n}` (the
    re-export `exports.a = a` of each name); the start alone does not tell a destructured import
    from a destructured value, so each is read from its start to its closing line."""
    out: set[int] = set()
    for number, line in enumerate(lines, 1):
        opened = _NAMES_OPEN.match(line)
        if not opened:
            continue
        exports = "exports" in opened.group(1)
        for last in range(number, len(lines)):
            closing = lines[last]
            if _NAME_LINE.match(closing):
                continue
            if re.match(r"^\s*\}\s*;?\s*$" if exports else r"^\s*\}\s*=\s*require\(", closing) and (
                    not exports or ":" not in "".join(lines[number:last])):
                out.update(range(number, last + 2))
            break
    return out


GENERIC_LANGUAGES = frozenset({"typescript", "java", "rust"})


def extent(lines: list[str], start: int, lang: str | None, kind: str) -> int:
    """The last line (1-based) of the definition starting on line `start`."""
    if lang == "python":
        head = lines[start - 1]
        indent = len(head) - len(head.lstrip())
        last = start
        depth = 0
        for number in range(start, len(lines) + 1):
            text = lines[number - 1]
            code = code_of(text, lang)
            if number > start and text.strip() and depth == 0 and len(text) - len(text.lstrip()) <= indent \
                    and not text.lstrip().startswith((")", "]", "}")):
                break
            depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
            if text.strip():
                last = number
        return last
    depth = 0
    opened = False
    needs_block = kind in FUNCTION_KINDS | {"class", "struct", "interface", "enum", "implementation", "type"}
    if kind == "enumConstant":  # ends where its arguments close, before the comma of the next one
        for number in range(start, min(len(lines), start + 200) + 1):
            depth += sum(lines[number - 1].count(c) for c in "([{") - sum(lines[number - 1].count(c) for c in ")]}")
            if depth <= 0:
                return number
        return start
    in_string = False  # inside a string of several lines (its text blanked, its quotes kept)
    # In a signature's type parameters (`<S, Ext extends {} = {}>`) a brace is a type, not the block:
    # the angle brackets are counted until the parameters or the block open.
    signature = needs_block and lang in GENERIC_LANGUAGES
    angles = 0
    for number in range(start, len(lines) + 1):
        code = lines[number - 1]
        if code.count("`") % 2 or code.count('"""') % 2:
            in_string = not in_string
        for index, char in enumerate(code):
            if signature:
                if char == "<":
                    angles += 1
                    continue
                if char == ">" and angles and code[index - 1] != "=":
                    angles -= 1
                    continue
                if angles:
                    continue
                signature = char not in "({"
            if char in "([{":
                depth += 1
                opened = opened or char == "{"
            elif char in ")]}":
                depth -= 1
                if depth == 0 and char == "}" and needs_block:
                    return number
            elif char == ";" and depth == 0:
                return number
        if depth <= 0 and not in_string and (not needs_block or (opened and depth == 0)) and number >= start:
            if not code.rstrip().endswith((",", "=", "+", "(", "&&", "||", "?", ":", ".", "=>", "|")):
                return number
    return start
