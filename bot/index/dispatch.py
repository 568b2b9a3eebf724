"""Calls through an interface (Go, TypeScript): `c.JSON(…)` with `c Context`, where the interface
Context declares JSON and an unexported struct `context` (or a class) implements it. The receiver's
declared type names the interface, not the implementation, so the use may run any implementation's
method, the target's among them: a guess (MAYBE), as Java's calls through an abstract type are
(bot/index/resolve_java.py). Which definitions are interfaces is read from their files, through the
retrieval's module system (bot/index/modules.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.index.resolve_go import receiver_type
from bot.index.uses import FileUses, Use
from bot.store.index.model import Located

if TYPE_CHECKING:
    from bot.index.modules import Modules

LANGUAGES = frozenset({"go", "typescript", "tsx"})


def through_interface(use: Use, where: FileUses, target: Located, rivals: list[Located], modules: Modules) -> bool:
    """Whether `use` calls the method through a receiver declared of an interface (one of this
    repository's) that declares a method of the target's name, the target's own type being another."""
    owner = target.definition.scope.split(".")[-1]
    last = re.split(r"\.|::", use.qualifier or "")[-1].strip()
    declared = receiver_type(use, where) if where.language == "go" else \
        where.types_at(use.line).get(last) if last else None
    if declared is None or declared == owner:
        return False
    for rival in rivals:
        if rival.definition.scope.split(".")[-1] != declared:
            continue
        there = modules.read(rival.path)
        if there is not None and any(d.name == declared and _interface(d.kind, d.signature) for d in there.definitions):
            return True
    return False


def _interface(kind: str, signature: str) -> bool:
    return kind == "interface" or kind == "type" and re.search(r"\binterface\b", signature) is not None
