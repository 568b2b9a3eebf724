"""JavaScript's and TypeScript's classes: a method called through a receiver declared of a
subclass (`schema: ZodString`, `schema.parse()` with parse defined in ZodType, which ZodString
extends) is the superclass's method, unless a class on the way overrides it. Each class is found
as the using file binds its name (its own, or an import), through the retrieval's module system
(bot/index/modules.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.index.uses import FileUses, Use
from bot.store.index.model import Located

if TYPE_CHECKING:
    from bot.index.modules import Modules

LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
_DEPTH = 4  # superclasses followed at most
_EXTENDS = re.compile(r"\bextends\s+([\w$.]+)")


def inherited_through(use: Use, where: FileUses, target: Located, modules: Modules) -> bool:
    """Whether `use` (`x.m()`, x declared of class C) reaches the target method of a superclass of C."""
    owner, name = target.definition.scope.split(".")[-1], target.definition.name
    last = (use.qualifier or "").split(".")[-1].strip()
    declared = where.types_at(use.line).get(last) if last else None
    if not owner or declared is None or declared == owner:
        return False
    file, cls = where, declared
    for _ in range(_DEPTH):
        found = _class(cls, file, modules)
        if found is None:
            return False
        there = modules.read(found.path)
        if there is None or any(d.name == name and d.scope.split(".")[-1] == cls for d in there.definitions):
            return False  # the class defines (overrides) the method itself
        parent = _EXTENDS.search(found.definition.signature)
        if parent is None:
            return False
        file, cls = there, parent.group(1).split(".")[-1]
        if cls == owner:  # the superclass the file names is the target's own class
            base = _class(cls, file, modules)
            d = target.definition
            return base is not None and base.path == target.path and base.definition.start <= d.start <= base.definition.end
    return False


def _class(name: str, where: FileUses, modules: Modules) -> Located | None:
    """The class `name` as `where` binds it: its own, or what its import of the name is."""
    own = next((d for d in where.definitions if d.name == name and d.kind == "class"), None)
    if own is not None:
        return Located(where.path, own)
    bound = modules.resolved(Use(name, 0, None, False, False, False, None), where)
    return next((loc for loc in bound if loc.definition.kind == "class"), None)

