"""Subclasses in Python, JavaScript and TypeScript: a method called through `super` is the first
superclass's up the chain that defines it; a method called through a receiver declared of
a subclass (`schema: ZodString`, `schema.parse()` with parse defined in ZodType, which ZodString
extends; `client: AsyncClient`, `client.build_request()` with it in BaseClient) is the
superclass's method, unless a class on the way overrides it. Each class is found as the file that
names it binds the name (its own, or an import), through the retrieval's module system
(bot/index/modules.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.index.uses import FileUses, Use
from bot.store.index.model import Located

if TYPE_CHECKING:
    from bot.index.modules import Modules

LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx"})
_DEPTH = 4  # superclasses followed at most
_EXTENDS = re.compile(r"\bextends\s+([\w$.]+)")
_PYTHON_BASES = re.compile(r"^\s*class\s+\w+\s*\((.*)\)\s*:")


def inherited_through(use: Use, where: FileUses, target: Located, modules: Modules) -> bool:
    """Whether `use` (`x.m()`, x declared of class C) reaches the target method of a superclass of C."""
    owner = target.definition.scope.split(".")[-1]
    last = (use.qualifier or "").split(".")[-1].strip()
    declared = where.types_at(use.line).get(last) if last else None
    if not owner or declared is None or declared == owner:
        return False
    return _reaches([(where, declared)], target, modules)


def overridden_through(use: Use, where: FileUses, target: Located, modules: Modules) -> bool:
    """Whether `x.m()`, x declared of class D, may run the target as an override: the target's
    class has D among its superclasses, so an x of that class is a D whose m is the target."""
    owner = target.definition.scope.split(".")[-1]
    last = (use.qualifier or "").split(".")[-1].strip()
    declared = where.types_at(use.line).get(last) if last else None
    there = modules.read(target.path)
    own = next((d for d in there.definitions if d.name == owner and d.kind == "class"), None) if there else None
    if declared is None or declared == owner or own is None or there is None:
        return False
    frontier, seen = [(there, parent) for parent in _parents(own.signature)], set()
    for _ in range(_DEPTH):
        following = []
        for file, cls in frontier:
            if cls == declared:
                return True
            found = _class(cls, file, modules)
            above = modules.read(found.path) if found is not None and (found.path, cls) not in seen else None
            if found is not None and above is not None:
                seen.add((found.path, cls))
                following += [(above, parent) for parent in _parents(found.definition.signature)]
        frontier = following
    return False


def through_super(use: Use, where: FileUses, target: Located, modules: Modules) -> bool:
    """Whether `super().m()` (Python) or `super.m()` (JavaScript) in a method of class C reaches the
    target: the first of C's superclasses up the chain that defines m is the target's class."""
    holder = where.caller_of(use.line)
    cls = holder.scope.split(".")[-1] if holder is not None and holder.scope else ""
    own = next((d for d in where.definitions if d.name == cls and d.kind == "class"), None)
    if own is None:
        return False
    return _reaches([(where, parent) for parent in _parents(own.signature)], target, modules)


def _reaches(frontier: list[tuple[FileUses, str]], target: Located, modules: Modules) -> bool:
    """Whether the target method is what the classes of `frontier` have under its name, each its
    own or inherited from the first superclass up its chain that defines it."""
    owner, name = target.definition.scope.split(".")[-1], target.definition.name
    seen: set[tuple[str, str]] = set()
    for _ in range(_DEPTH):
        following = []
        for file, cls in frontier:
            found = _class(cls, file, modules)
            there = modules.read(found.path) if found is not None and (found.path, cls) not in seen else None
            if found is None or there is None:
                continue
            seen.add((found.path, cls))
            if cls == owner:  # the target's own class, as the subclass's file names it
                d = target.definition
                if found.path == target.path and found.definition.start <= d.start <= found.definition.end:
                    return True
                continue
            if any(d.name == name and d.scope.split(".")[-1] == cls for d in there.definitions):
                continue  # the class defines (overrides) the method itself
            following += [(there, parent) for parent in _parents(found.definition.signature)]
        frontier = following
    return False


def _parents(signature: str) -> list[str]:
    """The classes a class extends: JavaScript's `extends X`, Python's bases (not `metaclass=`)."""
    python = _PYTHON_BASES.match(signature)
    if python:
        bases = [b.strip() for b in re.sub(r"\[[^\]]*\]", "", python.group(1)).split(",")]
        return [b.split(".")[-1] for b in bases if b and "=" not in b and re.fullmatch(r"[\w.]+", b)]
    found = _EXTENDS.search(signature)
    return [found.group(1).split(".")[-1]] if found else []


def _class(name: str, where: FileUses, modules: Modules) -> Located | None:
    """The class `name` as `where` binds it: its own, or what its import of the name is."""
    own = next((d for d in where.definitions if d.name == name and d.kind == "class"), None)
    if own is not None:
        return Located(where.path, own)
    bound = modules.resolved(Use(name, 0, None, False, False, False, None), where)
    return next((loc for loc in bound if loc.definition.kind == "class"), None)
