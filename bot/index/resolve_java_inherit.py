"""Java's inheritance past one level: a method called bare or through `this` in a class reaches
the methods its supertypes inherit from theirs (`class C extends B`, `class B extends A`: `size()`
in C may be A's). Each supertype's file is found as javac would find its type: the import that
names it, else the using file's package (its directory, a file named after the type); and read
through the retrieval's module system (bot/index/modules.py)."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from bot.index.languages import CONTAINER_KINDS
from bot.index.resolve_java import supertypes, type_chain, type_is
from bot.index.strength import YES
from bot.index.uses import FileUses, Use
from bot.store.index.model import Located

if TYPE_CHECKING:
    from bot.index.modules import Modules

_DEPTH = 4  # supertypes followed at most


def inherited(use: Use, where: FileUses, target: Located, modules: Modules) -> bool:
    """Whether the class around a bare or `this.` use inherits the target's type through its
    supertypes' own (the first level is bot/index/resolve_java.py's)."""
    chain, d = type_chain(target), target.definition
    if not chain or use.qualifier not in (None, "this") or d.kind in CONTAINER_KINDS or d.kind == "constructor" \
            or re.match(r"(@\w+(\([^)]*\))?\s+)*private\b", d.signature):
        return False  # a member that a subclass inherits: not a type, a constructor or a private one
    frontier = [(where, name) for name in supertypes(where, use.line)]
    seen: set[str] = set()
    for _ in range(_DEPTH):
        following: list[tuple[FileUses, str]] = []
        for file, name in frontier:
            if type_is(name, file, chain, target.path) == YES:
                return True
            path = _type_file(name, file, modules)
            there = modules.read(path) if path is not None and path not in seen else None
            if path is None or there is None:
                continue
            seen.add(path)
            simple = name.rsplit(".", 1)[-1]
            declared = next((d for d in there.definitions if d.name == simple and d.kind in CONTAINER_KINDS), None)
            if declared is not None:
                following += [(there, t) for t in supertypes(there, declared.start)]
        frontier = following
    return False


def _type_file(name: str, file: FileUses, modules: Modules) -> str | None:
    """The file of the type `name` as written in `file`: imported (`import com.ex.Base;`), or of
    the file's own package, by Java's one public top-level type a file."""
    head = name.split(".")[0]
    source = file.imports.get(head)
    if source is not None:
        return modules.file_ending("/" + source.replace(".", "/") + ".java")
    same = posixpath.join(posixpath.dirname(file.path), head + ".java")
    return same if modules.read(same) is not None else None
