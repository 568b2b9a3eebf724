"""JavaScript's and TypeScript's own rules: the function-like regions ctags does not tag, and
CommonJS's member assignments (`exports.x = …`, `res.send = function send …`) as definitions
(bench/context_truth.py says the rules)."""

from __future__ import annotations

import re
from collections.abc import Callable

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


def member_tags(path: str, lines: list[str], found: dict, code: Callable[[str], list[str]]) -> None:
    """Adds to `found` each assignment at a line's start to a member of a module-level object
    (`code(path)`: the file's lines with comments and strings blanked)."""
    for number, text in enumerate(lines, 1):
        match = JS_MEMBER.match(text)
        if match and (path, number, match.group(2)) not in found and not REEXPORT.match(text):
            kind = "function" if re.search(r"=\s*(async\s+)?function\b", text) else "property"
            found[(path, number, match.group(2))] = Tag(match.group(2), path, number,
                                                       extent(code(path), number, "javascript", kind), kind,
                                                       match.group(1), "object")


def region_tags(path: str, found: dict, code: Callable[[str], list[str]]) -> None:
    """Adds to `found` the functions ctags leaves out (nested ones in TypeScript)."""
    regions = js_functions(path, code(path))
    for tag in regions:
        if not any(k[0] == path and k[1] == tag.line for k in found):
            nested = any(o is not tag and o.line < tag.line <= o.end for o in regions)
            found[(path, tag.line, tag.name)] = Tag(tag.name, path, tag.line, tag.end, "function", "",
                                                    "function" if nested else "")
