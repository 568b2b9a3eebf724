"""What the truth is made of: a definition (`Tag`), each file's language, and the kinds of
definition a reviewer opens (bench/context_truth.py says the rules)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

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


def is_member(tag: Tag) -> bool:
    """A method or field (of a class, struct, impl, or a JavaScript object other than `exports`)."""
    if not tag.scope or tag.scope in ("exports", "module.exports", "module"):
        return False
    if language(tag.path) == "go":  # ctags scopes a method by package.Type, a function by package
        return tag.kind in ("func", "member") and "." in tag.scope
    if tag.scope_kind in ("function", "method", "member", "func"):
        return False  # a function nested in another: called bare, where it is seen
    return tag.kind in FUNCTION_KINDS | {"field", "property", "constant", "variable"}
