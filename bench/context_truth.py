"""Derives the ground truth of bench/context_cases.json mechanically, then applies our review.

Definitions come from universal-ctags (`apt-get install universal-ctags`), plus one rule ctags
misses: in JavaScript, an assignment at the start of a line to a member of a module-level object
(`exports.x = …`, `res.send = function send …`, `app.set = …`) defines `x`. Uses come from
`git grep -w` (a hit in a comment or a string does not count). A definition's extent is read from
the text: from its line to the brace that closes its first block (or the `;`/end of line that ends
a statement without one), by indentation in Python. Nothing here reads the code under test.

For each case:
- **definitions** (what the added lines use): every identifier on an added line of a primary
  source (comments and strings left out) defined in the repository's primary sources at `base`
  in another file (a name the changed file defines itself is in the diff's reach; what tests and
  examples use is acceptable, not truth; a method or field counts only for a use through a
  receiver, `x.name`, and after a Rust type's `::` only a member, `Value::Number` being a
  variant; Go's predeclared names are not uses). One file defines it: that definition is truth
  (several overloads in that one file: any one of them). Several files: truth only where the
  review names the one a reader would open, from the file's imports, `use` paths, package or the
  receiver's type, and says why; unreviewed, the name is left out of the truth. A name defined in
  more than 8 files is left out. Imports and aliases (Python `import`, `var x = require(…)`,
  `var join = path.join`), object literals' keys and variables inside functions are not
  definitions.
- **callers** (who depends on what changed): every definition (function, method, constant,
  variable, field) that holds a touched line, innermost only; for each, every line of the
  repository that uses its name (`git grep -w`, at the head for changed files), other than the
  definition itself (for a method or field: only uses through a receiver, `x.name`/`X::name`,
  or bare inside its Java class), mapped to its innermost enclosing named function: one truth item per calling
  function, however many uses it holds. A use outside any function (a module-level statement)
  is an item of its own line, except imports and re-exports (`import`, `require(`,
  `export … from`, `pub use`, `exports.x = x`): they are not callers. Calling functions in tests,
  examples, benchmarks and docs (bench.context_data.is_secondary) are not truth: the primary
  sources come first. A name that other definitions share is left out of the truth unless the
  review says which uses are this definition's (a regular expression that a use's line must
  match, such as `(res|this)\\.send\\(`, with the reason).
- **acceptable**: everything the rules found before the review narrowed it (every definition of
  a used name, every function holding a use of a changed name, tests and re-exports included).
  The bench's precision counts a returned definition or caller piece as right when it overlaps
  a truth or an acceptable item of its kind in its file.

Usage: python bench/context_truth.py [--repos DIR] [--case ID ...] [--show]
Writes `truth`, `acceptable` and `derivation` (what the rules dropped, and why) into each case.
"""

from __future__ import annotations

import argparse
import ast
import json
import posixpath
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from context_data import CASES, change_of, find_repo, git, is_secondary, repos_dir  # noqa: E402

LANGUAGES = {
    ".py": "python", ".go": "go", ".js": "javascript", ".cjs": "javascript", ".mjs": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".java": "java", ".rs": "rust",
}
# ctags kinds that are definitions a reviewer opens, per language.
DEFINITION_KINDS = {
    "python": {"class", "function", "member", "variable"},
    "go": {"func", "const", "var", "type", "struct", "interface", "talias", "methodSpec"},
    "javascript": {"function", "class", "method", "constant", "variable", "getter", "setter", "generator",
                   "property"},
    "typescript": {"function", "class", "method", "constant", "variable", "alias", "interface", "enum",
                   "generator"},
    "java": {"class", "interface", "enum", "method", "field", "enumConstant", "annotation"},
    "rust": {"function", "method", "struct", "enum", "interface", "typedef", "macro", "variable"},
}
# Kinds that hold code which can use a name: the "calling function" of a use.
FUNCTION_KINDS = {"function", "member", "func", "method", "getter", "setter", "generator"}
CHANGEABLE_KINDS = FUNCTION_KINDS | {"constant", "variable", "const", "var", "field", "property", "enumConstant"}
TYPE_KINDS = {"class", "struct", "interface", "enum", "namespace", "module", "type", "implementation"}
MAX_FILES = 8
IMPORT = re.compile(r"^\s*(import\b|from\s+\S+\s+import\b|export\s+(\*|\{[^}]*\}|type\s+\{[^}]*\})\s+from\b|"
                    r"pub(\([^)]*\))?\s+use\b|use\b|(var|let|const)\s+[\w{}\s,]+=\s*require\(|package\b)")
JS_MEMBER = re.compile(r"^(?:module\.)?([A-Za-z_$][\w$]*)(?:\.prototype)?\.([A-Za-z_$][\w$]*)\s*=(?!=)")
REEXPORT = re.compile(r"^\s*(?:(?:module\.)?exports(?:\.[\w$]+)?\s*=\s*)+[\w$]+\s*;?\s*$")
GO_PREDECLARED = frozenset(
    "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 "
    "uint16 uint32 uint64 uintptr true false iota nil append cap close complex copy delete imag len make new "
    "panic print println real recover any comparable min max clear".split())
ALIAS = re.compile(r"^\s*(var|let|const)\s+[\w$]+\s*=\s*[A-Za-z_$][\w$]*(\.[\w$]+)+\s*;?\s*$")  # `var join = path.join;`
RUST_CONST = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?([A-Za-z_]\w*)\s*:")
RUST_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"\w+\")\s+)*fn\s+(\w+)")
WORD = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True)
class Tag:
    name: str
    path: str
    line: int
    end: int
    kind: str
    scope: str
    scope_kind: str = ""  # what holds it: class, object (a JavaScript module object), function, ...

    @property
    def label(self) -> str:
        return f"{self.scope}.{self.name}" if self.scope else self.name


def language(path: str) -> str | None:
    return LANGUAGES.get(posixpath.splitext(path)[1].lower())


def family(path: str) -> str | None:
    """JavaScript and TypeScript call each other (a test in .js of a library in .ts)."""
    lang = language(path)
    return "javascript" if lang == "typescript" else lang


# --- text: comments and strings out, extents ---------------------------------------------------

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


def python_loads(text: str) -> dict[int, list[tuple[str, bool]]] | None:
    """Per line, the names Python code reads there: (name, used through an attribute)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[int, list[tuple[str, bool]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            out.setdefault(node.lineno, []).append((node.id, False))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            out.setdefault(node.end_lineno or node.lineno, []).append((node.attr, True))
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
    return out


_JS_FUNCTION = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)"  # function name(
    r"|^\s*(?:export\s+)?(?:const|let|var)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\(|[\w$]+\s*=>|<)"
    r"|^\s*(?:(?:public|private|protected|static|readonly|override|async|get|set)\s+)*(#?[\w$]+)\s*"
    r"(?:\??:\s*[^=;]+)?=\s*(?:async\s+)?(?:\([^;]*\)|[\w$]+)\s*(?::[^=]+)?=>"  # class property arrow
    r"|^\s*(?:(?:public|private|protected|static|readonly|override|async|get|set)\s+)*\*?(#?[\w$]+)\s*(?:<.*?>)?"
    r"\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?::\s*[^{=]+)?\{\s*$"  # method shorthand / class method: name(...) {
    r"|^\s*(?:(?:public|private|protected|static|readonly|override|async|get|set)\s+)*\*?(#?[\w$]+)\s*(?:<.*?>)?"
    r"\(\s*$")  # the same with its parameters on the lines below (checked: `) {` closes them)


def _closes_as_method(code: list[str], start: int) -> bool:
    depth = 0
    for number in range(start, min(len(code), start + 40) + 1):
        line = code[number - 1]
        for index, char in enumerate(line):
            depth += char == "("
            depth -= char == ")"
            if depth == 0 and char == ")":
                return re.match(r"^\s*(?::\s*[^{=]+)?\{\s*$", line[index + 1:]) is not None
    return False


def js_functions(path: str, code: list[str]) -> list[Tag]:
    """Function-like regions of a JavaScript/TypeScript file that ctags does not tag (class
    properties holding arrow functions, `#private` methods, object literal methods, arrow
    consts), each to the brace that closes it."""
    out = []
    for number, line in enumerate(code, 1):
        match = _JS_FUNCTION.match(line)
        if not match:
            continue
        name = next(g for g in match.groups() if g)
        if match.group(5) and not _closes_as_method(code, number):
            continue  # a call spread over lines, not a method
        if name in ("if", "for", "while", "switch", "catch", "return", "function", "new", "await", "typeof"):
            continue
        arrow = match.group(2) or match.group(3)  # an arrow's body may be an expression, not a block
        end = extent(code, number, "javascript", "variable" if arrow else "function")
        out.append(Tag(name, path, number, end, "function", ""))
    return out


def python_uses(text: str, name: str) -> set[int] | None:
    """Lines where Python code uses `name` (a name, or an attribute `x.name`); None: no parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines: set[int] = set()
    shadowed: set[int] = set()  # lines of functions where the name is a parameter or a local
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs,
                                      *(x for x in (node.args.vararg, node.args.kwarg) if x))]
            stores = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name
                      and isinstance(n.ctx, ast.Store)]
            if name in params or stores:
                shadowed.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and node.lineno not in shadowed:
            lines.add(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == name:
            lines.add(node.end_lineno or node.lineno)
        elif isinstance(node, ast.alias) and (node.asname or node.name).split(".")[-1] == name:
            lines.add(node.lineno)
    return lines


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
    for number in range(start, len(lines) + 1):
        code = lines[number - 1]
        if code.count("`") % 2 or code.count('"""') % 2:
            in_string = not in_string
        for char in code:
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


# --- definitions -------------------------------------------------------------------------------


def tags_of(root: Path, paths: list[str]) -> list[Tag]:
    """Definitions in `paths` under `root`: ctags, plus JavaScript's member assignments."""
    listing = root / ".ctags-files"
    listing.write_text("\n".join(paths))
    out = subprocess.run(["ctags", "--output-format=json", "--fields=+neKZS", "-L", str(listing), "-f", "-"],
                         cwd=root, capture_output=True, text=True, check=True).stdout
    texts: dict[str, list[str]] = {}
    stripped: dict[str, list[str]] = {}

    def code(path: str) -> list[str]:
        if path not in stripped:
            stripped[path] = strip_file("\n".join(texts[path]), language(path))
        return stripped[path]
    found: dict[tuple[str, int, str], Tag] = {}
    for row in out.splitlines():
        tag = json.loads(row)
        path, name, kind = tag["path"], tag["name"], tag["kind"]
        lang = language(path)
        if lang is None or kind not in DEFINITION_KINDS[lang] or name.startswith("AnonymousFunction") \
                or not WORD.fullmatch(name):
            continue
        if lang == "rust" and kind == "typedef" and (tag.get("scopeKind") == "implementation" or re.match(
                r"^\s+type\s", (root / path).read_text(errors="replace").split("\n")[tag["line"] - 1])):
            continue  # `type Error = Error;` in an impl: an associated type, not a definition to open
        lines = texts.setdefault(path, (root / path).read_text(errors="replace").split("\n"))
        text = lines[tag["line"] - 1]
        if IMPORT.match(text) or ALIAS.match(text) or (lang == "python" and kind == "variable" and tag.get("scope")):
            continue
        if lang in ("javascript", "typescript") and (kind == "property" or (
                kind in ("variable", "constant") and tag.get("scope"))):
            continue  # an object literal's key, or a variable that is not the module's
        if lang in ("javascript", "typescript") and (name in ("exports", "module") or (
                kind == "class" and not re.search(r"\bclass\b", text)) or (
                kind in ("variable", "constant") and text[:1].isspace())):
            continue  # CommonJS's own objects; a variable indented inside a block
        if lang in ("python", "javascript", "typescript") and kind in ("variable", "constant") \
                and tag.get("scopeKind") in FUNCTION_KINDS | {"function"}:
            continue  # a local
        key = (path, tag["line"], name)
        if key not in found or (kind in FUNCTION_KINDS and found[key].kind not in FUNCTION_KINDS):
            member = JS_MEMBER.match(text) if lang == "javascript" else None
            found[key] = Tag(name, path, tag["line"], extent(code(path), tag["line"], lang, kind), kind,
                             member.group(1) if member else (tag.get("scope") or "").replace("::", "."),
                             "object" if member else tag.get("scopeKind") or "")
    for path in paths:
        if language(path) == "python":
            text = (root / path).read_text(errors="replace")
            python = python_tags(path, text)
            if python is not None:
                found = {k: v for k, v in found.items() if k[0] != path}
                found.update({(t.path, t.line, t.name): t for t in python})
        if language(path) == "rust":
            lines = texts.setdefault(path, (root / path).read_text(errors="replace").split("\n"))
            for number, text in enumerate(lines, 1):
                match = RUST_CONST.match(text) or RUST_FN.match(text)
                if match and not any(k[0] == path and k[1] == number for k in found):
                    kind = "function" if match.re is RUST_FN else "variable"
                    found[(path, number, match.group(1))] = Tag(match.group(1), path, number,
                                                                extent(code(path), number, "rust", kind), kind, "")
        if language(path) in ("javascript", "typescript"):  # functions ctags leaves out (nested ones in TS)
            texts.setdefault(path, (root / path).read_text(errors="replace").split("\n"))
            regions = js_functions(path, code(path))
            for tag in regions:
                if not any(k[0] == path and k[1] == tag.line for k in found):
                    nested = any(o is not tag and o.line < tag.line <= o.end for o in regions)
                    found[(path, tag.line, tag.name)] = Tag(tag.name, path, tag.line, tag.end, "function", "",
                                                            "function" if nested else "")
        if language(path) != "javascript":
            continue
        lines = texts.setdefault(path, (root / path).read_text(errors="replace").split("\n"))
        for number, text in enumerate(lines, 1):
            match = JS_MEMBER.match(text)
            if match and (path, number, match.group(2)) not in found and not REEXPORT.match(text):
                kind = "function" if re.search(r"=\s*(async\s+)?function\b", text) else "property"
                found[(path, number, match.group(2))] = Tag(match.group(2), path, number,
                                                           extent(code(path), number, "javascript", kind), kind,
                                                           match.group(1), "object")
    return sorted(found.values(), key=lambda t: (t.path, t.line))


def python_tags(path: str, text: str) -> list[Tag] | None:
    """Python's definitions read with its own parser (`ast`), which knows where each one ends:
    functions, classes, methods, and module-level assignments (annotated ones too, which ctags
    misses). None when the file does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: list[Tag] = []

    def visit(nodes, scope: list[str], in_class: bool) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else ("member" if in_class else "function")
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                out.append(Tag(node.name, path, start, node.end_lineno or node.lineno, kind, ".".join(scope),
                               "class" if in_class else "function" if scope else ""))
                visit(node.body, [*scope, node.name], isinstance(node, ast.ClassDef))
            elif not scope and isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        out.append(Tag(target.id, path, node.lineno, node.end_lineno or node.lineno, "variable", ""))
            elif isinstance(node, (ast.If, ast.Try)) and not scope:
                visit([*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])], scope, in_class)

    visit(tree.body, [], False)
    return out


def enclosing(tags: list[Tag], path: str, line: int, extra: list[Tag] = ()) -> Tag | None:
    """The innermost named function or method holding `line`."""
    best = None
    for tag in [*tags, *extra]:
        if tag.path == path and tag.kind in FUNCTION_KINDS and tag.line <= line <= tag.end:
            if best is None or tag.line >= best.line:
                best = tag
    return best


def innermost(tags: list[Tag], path: str, line: int) -> Tag | None:
    best = None
    for tag in tags:
        if tag.path == path and tag.line <= line <= tag.end and (best is None or tag.line >= best.line):
            best = tag
    return best


# --- one case ----------------------------------------------------------------------------------


def item(kind: str, tags: list[Tag], symbol: str) -> dict:
    return {"kind": kind, "symbol": symbol, "alts": [[t.path, t.line, t.end] for t in tags]}


def derive(repo: str, case: dict) -> dict:
    change = change_of(repo, case)
    review = case.get("review", {})
    with tempfile.TemporaryDirectory() as tmp:
        base_root, head_root = Path(tmp) / "base", Path(tmp) / "head"
        base_root.mkdir()
        head_root.mkdir()
        archive = git(repo, "archive", case["base"])
        subprocess.run(["tar", "-x", "-C", str(base_root)], input=archive, check=True)
        files = [p for p in git(repo, "ls-tree", "-r", "--name-only", case["base"]).decode().splitlines()
                 if language(p) and (base_root / p).is_file()]
        base_tags = tags_of(base_root, files)
        changed = set(change.head_texts) | {e["filename"] for e in change.entries}
        for path, text in change.head_texts.items():
            (head_root / path).parent.mkdir(parents=True, exist_ok=True)
            (head_root / path).write_text(text)
        head_tags = tags_of(head_root, [p for p in change.head_texts if language(p)])
    added, touched = _lines(change.entries)
    by_name: dict[str, list[Tag]] = {}
    for tag in base_tags:
        if tag.path not in changed:
            by_name.setdefault(tag.name, []).append(tag)
    for tag in head_tags:
        by_name.setdefault(tag.name, []).append(tag)
    notes: list[str] = []
    truth: list[dict] = []
    acceptable: list[list] = []
    truth += _definitions(change, added, by_name, review.get("definitions", {}), acceptable, notes)
    truth += _callers(repo, case, change, touched, base_tags, head_tags, by_name, review.get("callers", {}),
                      acceptable, notes)
    dropped = set(review.get("drop", []))
    kept = [t for t in truth if f"{t['kind']} {t['alts'][0][0]} {t['symbol']}" not in dropped]
    for t in truth:
        if t not in kept:
            notes.append(f"dropped by review: {t['kind']} {t['alts'][0][0]} {t['symbol']}")
    return {"truth": kept, "acceptable": sorted(map(list, {tuple(a) for a in acceptable})), "derivation": notes}


def _lines(entries: list[dict]) -> tuple[dict[str, dict[int, str]], dict[str, set[int]]]:
    """Added lines (new-file number → text) and touched lines of every file's patch."""
    added: dict[str, dict[int, str]] = {}
    touched: dict[str, set[int]] = {}
    for entry in entries:
        path = entry["filename"]
        new = 0
        for raw in entry["patch"].split("\n"):
            header = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)", raw)
            if header:
                new = int(header.group(1))
                continue
            if raw.startswith("+"):
                added.setdefault(path, {})[new] = raw[1:]
                touched.setdefault(path, set()).add(new)
                new += 1
            elif raw.startswith("-"):
                touched.setdefault(path, set()).add(max(1, new))
            else:
                new += 1
    return added, touched


def _reachable(name: str, place: Tag, path: str, head: str, imports: str, dotted: bool) -> bool:
    """Whether a bare use of `name` in `path` can mean the definition `place`: in Python,
    JavaScript and TypeScript the file must import or require the name; in Go and Java it must be
    of the same package (directory), or imported (Java); a use through a receiver or a path
    (`x.name`, `pkg.Name`, `a::name`) may mean any."""
    lang = language(path)
    if dotted or lang == "rust":
        return True
    if lang in ("python", "javascript", "typescript"):
        return re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", imports) is not None
    same_dir = posixpath.dirname(place.path) == posixpath.dirname(path)
    if lang == "java":
        return same_dir or re.search(rf"\b{re.escape(name)}\s*;|\.\*\s*;", imports) is not None
    return same_dir


def _definitions(change, added, by_name, review, acceptable, notes) -> list[dict]:
    out: list[dict] = []
    seen: set[str] = set()
    for path, lines in added.items():
        lang = language(path)
        if lang is None:
            continue
        secondary = is_secondary(path)
        head = change.head_texts.get(path, "")
        code_lines = strip_file(head, lang)
        imports = "\n".join(code_of(head.split("\n")[n - 1], lang) for n in sorted(import_lines(head, lang)))
        imports += "\n" + "\n".join(code_of(line, lang) for line in head.split("\n") if "require(" in line)
        python_names = python_loads(head) if lang == "python" else None
        for number, text in lines.items():
            code = code_lines[number - 1] if lang != "python" and number <= len(code_lines) else code_of(text, lang)
            if python_names is not None:  # Python: the names `ast` reads on the line (f-strings' too)
                code = " ".join(f"x.{n}" if dotted_use else n for n, dotted_use in python_names.get(number, []))
            dotted = {m.group(1) for m in re.finditer(r"(?:\.|::|->)\s*([A-Za-z_$][\w$]*)", code)}
            qualifiers = {m.group(1) for m in re.finditer(r"([A-Za-z_$][\w$]*)\s*(?:\.|::)\s*[A-Za-z_$]", code)}
            of_types = {m.group(1) for m in re.finditer(r"\b[A-Z]\w*\s*::\s*([A-Za-z_]\w*)", code)} \
                if lang == "rust" else set()  # `Value::Number`: a variant or an associated item
            for name in WORD.findall(code):
                if name in seen or (lang == "go" and name in GO_PREDECLARED):
                    continue
                seen.add(name)
                places = [t for t in by_name.get(name, []) if family(t.path) == family(path) and t.path != path
                          and (name in dotted or not _is_member(t) or lang == "java" and static_import(head, t))
                          and _reachable(name, t, path, head, imports, name in dotted)]
                for t in places:
                    acceptable.append(["definition", t.path, t.line, t.end])
                for t in by_name.get(name, []):
                    if t.path == path:
                        acceptable.append(["definition", t.path, t.line, t.end])
                if not secondary:
                    places = [t for t in places if not is_secondary(t.path)]
                if name in qualifiers and name not in dotted:  # `ClassName.get(`: the member is what is opened
                    places = [t for t in places if t.kind not in TYPE_KINDS]
                if name in of_types:
                    places = [t for t in places if _is_member(t)]
                files = sorted({t.path for t in places})
                if not files:
                    continue
                if secondary:
                    notes.append(f"definition {name}: used by a test or example only, left out")
                    continue
                if any(t.path == path for t in by_name.get(name, [])) and name not in review:
                    notes.append(f"definition {name}: defined in {path} itself, left out")
                    continue
                if name in review:
                    chosen = review[name]
                    if chosen is None:
                        notes.append(f"definition {name}: left out by review")
                        continue
                    chosen = [chosen] if isinstance(chosen, str) else chosen
                    if len(chosen) == 1 and "|" in chosen[0]:  # "path:l1|l2|l3": any one of these
                        where, _, numbers = chosen[0].partition(":")
                        picked = [t for t in places if t.path == where and str(t.line) in numbers.split("|")]
                        out.append(item("definition", picked, name))
                        continue
                    picked = [t for t in places if t.path in chosen or f"{t.path}:{t.line}" in chosen]
                    if not picked:
                        raise ValueError(f"review names {chosen} for {name}, which defines none of {files}")
                    if all(":" in c for c in chosen):  # each one named: each one is truth
                        out += [item("definition", [t], name) for t in picked]
                    else:
                        out.append(item("definition", picked, name))
                elif len(files) > MAX_FILES:
                    notes.append(f"definition {name}: defined in {len(files)} files, left out")
                elif len(files) > 1:
                    notes.append(f"definition {name}: defined in {files}, unreviewed, left out")
                else:
                    out.append(item("definition", places, name))
    return out


def _callers(repo, case, change, touched, base_tags, head_tags, by_name, review, acceptable, notes) -> list[dict]:
    out: dict[tuple[str, int], dict] = {}
    changed_defs: list[Tag] = []
    for path, lines in touched.items():
        for number in sorted(lines):
            tag = innermost(head_tags, path, number)
            if tag is None or tag.kind not in CHANGEABLE_KINDS:
                continue
            # and its aliases, which end where it ends (`req.get = req.header = function …`)
            for alias in head_tags:
                if alias.path == path and alias.end == tag.end and 0 <= tag.line - alias.line <= 2 \
                        and alias.kind in CHANGEABLE_KINDS and alias not in changed_defs:
                    changed_defs.append(alias)
    for target in changed_defs:
        lang = language(target.path)
        others = [t for t in by_name.get(target.name, []) if t != target and family(t.path) == family(target.path)
                  and (is_secondary(target.path) or not is_secondary(t.path))
                  and not (t.scope_kind in ("function", "method", "member", "func") and t.path != target.path)
                  and not (t.path == target.path and t.scope == target.scope and language(t.path) == "typescript"
                           and t.kind in FUNCTION_KINDS and (t.end == t.line or t.line <= target.end
                                                             and target.line <= t.end))]  # its overload signatures
        rule = review.get(target.name)
        if others and rule is None:
            files = sorted({t.path for t in others})
            notes.append(f"callers of {target.name}: also defined in {files[:5]}, unreviewed, left out")
        if rule == "none":
            notes.append(f"callers of {target.name}: left out by review")
        keep = _keeper(rule)
        member = _is_member(target)
        file_texts: dict[str, str] = {}
        regions: dict[str, tuple[list[Tag], set[int]]] = {}
        for path, number, text, code in _uses(repo, case, change, target, file_texts):
            word = rf"(?<![\w$]){re.escape(target.name)}(?![\w$])"
            if member and not re.search(r"(\.|::)\s*" + word, code) and not (lang == "java" and (
                    path == target.path or static_import(file_texts[path], target))):
                continue  # a method or field is used through a receiver (bare only inside its Java class)
            if path == target.path and target.line <= number <= target.end:
                continue
            tags = head_tags if path in change.head_texts else base_tags
            if path not in regions:
                body = file_texts[path]
                regions[path] = (js_functions(path, strip_file(body, lang)) if lang in ("javascript", "typescript")
                                 else [], import_lines(body, lang))
            if number in regions[path][1] or REEXPORT.match(text):
                acceptable.append(["caller", path, number, number])
                continue  # an import or a re-export: not a caller
            caller = enclosing(tags, path, number, regions[path][0])
            top = caller is None
            start, end = (number, number) if top else (caller.line, caller.end)
            acceptable.append(["caller", path, start, end])
            if is_secondary(path) and not is_secondary(target.path):
                continue
            if path in touched and any(start <= n <= end for n in touched[path]):
                continue  # the diff shows it
            if (others and rule is None) or rule == "none" or not keep(path, text):
                continue
            symbol = "<top level>" if top else caller.label
            out.setdefault((path, start), {"kind": "caller", "symbol": symbol, "of": target.name,
                                           "alts": [[path, start, end]]})
    return list(out.values())


def static_import(text: str, target: Tag) -> bool:
    """Whether a Java file imports the member statically (`import static a.b.Util.name;` or `.*`)."""
    owner = target.scope.split(".")[-1]
    return re.search(rf"^import\s+static\s+[\w.]*\b{re.escape(owner)}\.({re.escape(target.name)}|\*)\s*;",
                     text, re.M) is not None


def _is_member(tag: Tag) -> bool:
    """A method or field (of a class, struct, impl, or a JavaScript object other than `exports`)."""
    if not tag.scope or tag.scope in ("exports", "module.exports", "module"):
        return False
    if language(tag.path) == "go":  # ctags scopes a method by package.Type, a function by package
        return tag.kind in ("func", "member") and "." in tag.scope
    if tag.scope_kind in ("function", "method", "member", "func"):
        return False  # a function nested in another: called bare, where it is seen
    return tag.kind in FUNCTION_KINDS | {"field", "property", "constant", "variable"}


def _keeper(rule):
    """The review's rule for the uses of a shared name: "all", "none", a regular expression a use's
    line must match, or a list of {"match": regex, "in": [paths]} (a use kept when one matches)."""
    if rule is None or rule in ("all", "none"):
        return lambda path, text: True
    rules = [{"match": rule}] if isinstance(rule, str) else rule
    compiled = [(re.compile(r["match"]), set(r.get("in", []))) for r in rules]
    return lambda path, text: any(p.search(text) and (not where or path in where) for p, where in compiled)


def _uses(repo, case, change, target: Tag, file_texts: dict[str, str]):
    """(path, line, text, code) of every line that uses the name in code (not in a comment or a
    string; in Python, as a name or an attribute by `ast`), at the head for changed files."""
    lang = language(target.path)
    exts = [f"*{e}" for e, lng in LANGUAGES.items() if family(f"x{e}") == family(target.path)]
    done = subprocess.run(["git", "-C", repo, "grep", "-l", "-w", "-I", "-e", target.name, case["base"], "--", *exts],
                          capture_output=True, text=True, errors="replace")
    changed = set(change.head_texts) | {e["filename"] for e in change.entries}
    texts = {row.split(":", 1)[1]: None for row in done.stdout.splitlines()}
    texts = {p: None for p in texts if p not in changed}
    for path in texts:
        texts[path] = git(repo, "show", f"{case['base']}:{path}").decode("utf-8", errors="replace")
    for path, text in change.head_texts.items():
        if family(path) == family(target.path):
            texts[path] = text
    word = re.compile(rf"(?<![\w$]){re.escape(target.name)}(?![\w$])")
    file_texts.update(texts)
    for path, text in texts.items():
        lines = text.split("\n")
        code = strip_file(text, language(path))
        exact = python_uses(text, target.name) if lang == "python" else None
        for number, line in enumerate(code, 1):
            if word.search(line) and (exact is None or number in exact):
                yield path, number, lines[number - 1], line


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos")
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--show", action="store_true", help="print the derivation, write nothing")
    args = parser.parse_args()
    data = json.loads(CASES.read_text())
    root = repos_dir(args.repos)
    for case in data["cases"]:
        if args.case and case["id"] not in args.case:
            continue
        repo = find_repo(root, case["repo"])
        if repo is None:
            print(f"{case['id']}: {case['repo']} is not under {root}; fetch it first", file=sys.stderr)
            continue
        derived = derive(repo, case)
        print(f"== {case['id']} ({case['repo']})")
        for t in derived["truth"]:
            print(f"  {t['kind']:10} {t['alts'][0][0]}:{t['alts'][0][1]}-{t['alts'][0][2]} {t['symbol']}"
                  + (f" (of {t['of']})" if "of" in t else "") + (f" +{len(t['alts']) - 1} alt" if len(t["alts"]) > 1 else ""))
        for note in derived["derivation"]:
            print(f"  note: {note}")
        if not args.show:
            case.update(derived)
    if not args.show:
        CASES.write_text(dump(data))


def dump(data: dict) -> str:
    """One key of a case a line, each value compact: small diffs when a case's truth changes."""
    cases = []
    for case in data["cases"]:
        rows = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in case.items()]
        cases.append(" {\n" + ",\n".join(rows) + "\n }")
    head = {k: v for k, v in data.items() if k != "cases"}
    lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    return "{\n" + "\n".join(lines) + ("\n" if lines else "") + ' "cases": [\n' + ",\n".join(cases) + "\n]}\n"


if __name__ == "__main__":
    main()
