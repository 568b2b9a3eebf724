"""JavaScript's and TypeScript's own rules: the function-like regions ctags does not tag, and
CommonJS's member assignments (`exports.x = …`, `res.send = function send …`) as definitions
(bench/context_truth.py says the rules)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from truth.model import Tag
from truth.text import REEXPORT, extent

JS_MEMBER = re.compile(r"^(?:module\.)?([A-Za-z_$][\w$]*)(?:\.prototype)?\.([A-Za-z_$][\w$]*)\s*=(?!=)")

_JS_FUNCTION = re.compile(
    r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([\w$]+)"  # function name(
    r"|^\s*(?:export\s+)?(?:const|let|var)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\(|[\w$]+\s*=>|<)"
    r"|^\s*(?:(?:public|private|protected|static|readonly|override|async|get|set)\s+)*(#?[\w$]+)\s*"
    r"(?:\??:\s*[^=;]+)?=\s*(?:async\s+)?(?:\([^;]*\)|[\w$]+)\s*(?::[^=]+)?=>"  # class property arrow
    r"|^\s*(?:(?:public|private|protected|static|readonly|override|async|get|set)\s+)*\*?(#?[\w$]+)\s*(?:<.*?>)?"
    r"\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?::\s*[^{=]+)?\{\s*$"  # method shorthand / class method: name(...) {
    r"|^\s*(?:(?:public|private|protected|static|readonly|override|async|get|set)\s+)*\*?(#?[\w$]+)\s*(?:<.*?>)?"
    r"\(\s*$")  # the same with its parameters on the lines below (checked: `) {` closes them)


_SPLIT_CONST = re.compile(r"^\s*(?:export\s+)?(?:const|let|var)\s+([\w$]+)\s*(?::[^=]+)?=\s*$")
_FUNCTION_START = re.compile(r"^\s*(?:async\s+)?(?:function\b|\(|[\w$]+\s*=>|<)")


_PAREN_VALUE = re.compile(r"^\s*(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*(?::[^=]+)?=\s*(?:async\s+)?\(|^\s*(?:async\s+)?\(")


def _after_parens(code: list[str], start: int, column: int) -> str:
    """What follows the parenthesis that closes the first one opened on line `start` (from
    `column`), the next line's text when nothing does on the line."""
    depth = 0
    for number in range(start, min(len(code), start + 40) + 1):
        line = code[number - 1]
        for index in range(column if number == start else 0, len(line)):
            depth += line[index] == "("
            depth -= line[index] == ")"
            if depth == 0 and line[index] == ")":
                rest = line[index + 1:]
                return rest if rest.strip() or number >= len(code) else code[number]
    return ""


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


def _opens_arrow(code: list[str], number: int) -> bool:
    """Whether a value that starts with a parenthesis on line `number` (`const x = (` or a line
    starting with `(`) is an arrow function's parameters, not a parenthesised expression
    (`const split = (a || '').split(…)`: a variable)."""
    opening = _PAREN_VALUE.match(code[number - 1])
    if opening is None:
        return True  # `function`, `name =>` or `<T>(…) =>`: no parenthesis to read
    return re.match(r"^\s*(?::[^=]+)?=>", _after_parens(code, number, opening.end() - 1)) is not None


def js_functions(path: str, code: list[str]) -> list[Tag]:
    """Function-like regions of a JavaScript/TypeScript file that ctags does not tag (class
    properties holding arrow functions, `#private` methods, object literal methods, arrow
    consts), each to the brace that closes it."""
    out = []
    for number, line in enumerate(code, 1):
        match = _JS_FUNCTION.match(line)
        if not match:
            split = _SPLIT_CONST.match(line)  # `const name: Type =` with the function on the next line
            following = next((c for c in code[number:number + 3] if c.strip()), "")
            if split and _FUNCTION_START.match(following) and _opens_arrow(code, code.index(following, number) + 1):
                out.append(Tag(split.group(1), path, number, extent(code, number, "javascript", "variable"),
                               "function", ""))
            continue
        name = next(g for g in match.groups() if g)
        if match.group(5) and not _closes_as_method(code, number):
            continue  # a call spread over lines, not a method
        if match.group(2) and not _opens_arrow(code, number):
            continue  # a variable holding a parenthesised expression, not an arrow function
        if name in ("if", "for", "while", "switch", "catch", "return", "function", "new", "await", "typeof"):
            continue
        arrow = match.group(2) or match.group(3)  # an arrow's body may be an expression, not a block
        end = extent(code, number, "javascript", "variable" if arrow else "function")
        out.append(Tag(name, path, number, end, "function", ""))
    return out


def member_tags(path: str, lines: list[str], found: dict, code: Callable[[str], list[str]]) -> None:
    """Adds to `found` each assignment at a line's start to a member of a module-level object
    (`code(path)`: the file's lines with comments and strings blanked)."""
    for number, text in enumerate(lines, 1):
        match = JS_MEMBER.match(text)
        if match and match.group(1, 2) == ("module", "exports"):
            continue  # `module.exports = …`: the module's export (export_tags), not a member `exports`
        if match and (path, number, match.group(2)) not in found and not REEXPORT.match(text):
            kind = "function" if re.search(r"=\s*(async\s+)?function\b", text) else "property"
            found[(path, number, match.group(2))] = Tag(match.group(2), path, number,
                                                       extent(code(path), number, "javascript", kind), kind,
                                                       match.group(1), "object")


def region_tags(path: str, found: dict, code: Callable[[str], list[str]]) -> None:
    """Adds to `found` the functions ctags leaves out (nested ones in TypeScript); one inside
    another, or a `const` indented in a block or a callback, is a local (scope kind `function`)."""
    regions = js_functions(path, code(path))
    for tag in regions:
        if not any(k[0] == path and k[1] == tag.line for k in found):
            local = re.match(r"^\s+(?:const|let|var)\s", code(path)[tag.line - 1])  # inside a block or a callback
            nested = local or any(o is not tag and o.line < tag.line <= o.end for o in regions)
            found[(path, tag.line, tag.name)] = Tag(tag.name, path, tag.line, tag.end, "function", "",
                                                    "function" if nested else "")


# --- a module's default export, and the names that other files bind to it -----------------------

# `module.exports = <an expression that is not a name>`, `export default <an anonymous function,
# class or expression>`: the module's only name is the one each importer gives it.
_CJS_EXPORT = r"^(?:(?:var|let|const)\s+[\w$]+\s*=\s*)?(?:exports\s*=\s*)?module\.exports\s*=\s*"  # `var proto = module.exports = `
_ANONYMOUS_CJS = re.compile(_CJS_EXPORT + r"(?!\s*[\w$]+\s*;?\s*$)")
_ANONYMOUS_ESM = re.compile(r"^export\s+default\s+(?!\s*(?:(?:async\s+)?function\s*\*?\s*[\w$]+\s*[(<]"
                            r"|class\s+[\w$]+|(?:abstract|interface|enum|type)\b|[\w$]+\s*;?\s*$))")
_NAMED_DEFAULT = re.compile(r"^(?:" + _CJS_EXPORT[1:] + r"([\w$]+)\s*;?\s*$|export\s+default\s+(?:(?:async\s+)?"
                            r"function\s*\*?\s*|class\s+|abstract\s+class\s+)?([\w$]+))")
_BINDING = re.compile(r"^\s*(?:const|let|var)\s+([\w$]+)\s*=\s*require\(\s*['\"](\.{1,2}/[^'\"]*|\.{1,2})['\"]\s*\)\s*(?:;|,|$)"
                      r"|^\s*import\s+(?:type\s+)?([\w$]+)\s*(?:,\s*(?:\{[^}]*\}|\*\s+as\s+[\w$]+)\s*)?from\s*"
                      r"['\"](\.{1,2}/[^'\"]*|\.{1,2})['\"]", re.M)
_SUFFIXES = ("", ".js", ".cjs", ".mjs", ".ts", ".tsx", ".mts", "/index.js", "/index.ts", "/index.tsx")
EXPORT_NAMES = ("module.exports", "export default")


def export_tags(path: str, lines: list[str], found: dict, code: Callable[[str], list[str]]) -> None:
    """Adds to `found` the file's anonymous default export (`module.exports = (a, b) => …`,
    `export default function (…)`), named `module.exports` or `export default`: a definition
    that importers reach by the name they bind (`const name = require('./file')`)."""
    for number, text in enumerate(lines, 1):
        cjs = _ANONYMOUS_CJS.match(text)
        if cjs or _ANONYMOUS_ESM.match(text):
            rest = text[cjs.end():] if cjs else text.split("default", 1)[1]
            kind = "function" if re.match(r"\s*(async\s+)?(function\b|\([^)]*\)\s*=>|[\w$]+\s*=>|\(\s*$)", rest) \
                else "variable"
            name = EXPORT_NAMES[0] if cjs else EXPORT_NAMES[1]
            found[(path, number, name)] = Tag(name, path, number, extent(code(path), number, "javascript", kind),
                                              kind, "", "export")


def default_export(path: str, text: str, tags: list[Tag]) -> list[Tag]:
    """The definition a default import or a `require` of the file means: its anonymous export,
    or the top-level definition its `module.exports = name` / `export default name` names."""
    for number, line in enumerate(text.split("\n"), 1):
        anonymous = [t for t in tags if t.path == path and t.line == number and t.name in EXPORT_NAMES]
        if anonymous:
            return anonymous
        named = _NAMED_DEFAULT.match(line)
        if named:
            name = named.group(1) or named.group(2)
            return [t for t in tags if t.path == path and t.name == name and not t.scope]
    return []


def resolve(path: str, spec: str, files: set[str]) -> str | None:
    """The repository file a relative module path (`./file`, `../lib/x.js`) names from `path`."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    stems = [joined, re.sub(r"\.(m|c)?js$", "", joined)]
    for stem in stems:
        for suffix in _SUFFIXES:
            if stem + suffix in files:
                return stem + suffix
    return None


def bindings(path: str, text: str, files: set[str]) -> dict[str, tuple[str, int]]:
    """The names the file binds to another module's default export, each with the module's path
    and the line of the binding (`const name = require('./file')`, `import name from './file'`)."""
    out: dict[str, tuple[str, int]] = {}
    for match in _BINDING.finditer(text):
        name, spec = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        module = resolve(path, spec, files)
        if module is not None:
            out[name] = (module, text.count("\n", 0, match.start()) + 1)
    return out


@dataclass
class Modules:
    """The JavaScript and TypeScript files of a case (at the head for changed files), to resolve a
    name bound to a module (`const name = require('./file')`) to its default export, and back."""

    texts: dict[str, str]
    tags: dict[str, list[Tag]]  # per path

    def bound(self, path: str) -> dict[str, tuple[str, int]]:
        return bindings(path, self.texts.get(path, ""), set(self.texts))

    def default(self, path: str) -> list[Tag]:
        return default_export(path, self.texts.get(path, ""), self.tags.get(path, []))

    def importers(self, module: str) -> Iterator[tuple[str, str, int]]:
        """(path, name, line of the binding) of every file that binds a name to `module`."""
        for path, text in self.texts.items():
            if "require(" in text or "import" in text:
                for name, (target, line) in self.bound(path).items():
                    if target == module:
                        yield path, name, line


_MODULE_SYNTAX = re.compile(r"^\s*(import\b(?!\s*\()|export\b)|\brequire\s*\(|\bmodule\.exports\b|^\s*exports\.", re.M)
_EXPORT_LISTS = re.compile(r"\bexport\s+(?:type\s+|default\s+)?\{[^}]*\}|\bmodule\.exports\s*=\s*\{[^}]*\}", re.S)


def module_private(text: str, tag: Tag) -> bool:
    """Whether a top-level definition of a JavaScript or TypeScript module (a file that imports,
    requires or exports anything) is not exported: another file's word cannot mean it then, only
    its own file's uses do. A script without module syntax shares its top-level names (globals)."""
    if tag.scope or not _MODULE_SYNTAX.search(text):
        return False
    lines = text.split("\n")
    if tag.line <= len(lines) and re.match(r"\s*(export|declare)\b", lines[tag.line - 1]):
        return False
    word = rf"(?<![\w$]){re.escape(tag.name)}(?![\w$])"
    if any(re.search(word, block) for block in _EXPORT_LISTS.findall(text)):
        return False  # export { name } / module.exports = { name }
    exported = rf"\bexport\s+(default|=)\s*{word}|\bexports(\.[\w$]+)?\s*=\s*(?:[\w$.]+\s*=\s*)*{word}|\bexports\.{word}"
    return re.search(exported, text) is None
