"""Go's method promotion: a method of an embedded struct is a method of the struct that embeds
it (`type Sub struct { Base }` makes `s.Size()` Base's Size when `s *Sub`), however deep the
embedding goes. The struct is looked up in the packages of the use and of the method, through
the retrieval's module system (bot/index/modules.py), which reads each file once."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from bot.index.uses import FileUses, Use
from bot.store.index.model import Located

if TYPE_CHECKING:
    from bot.index.modules import Modules

_EMBEDDED = re.compile(r"^\s*\*?(?:\w+\.)?([A-Z_a-z]\w*)\s*(?:`[^`]*`)?\s*(?://.*)?$")
_DEPTH = 3  # embeddings followed at most


def promoted(use: Use, where: FileUses, target: Located, modules: Modules) -> bool:
    """Whether `use` (`s.Size()`) reaches `target` (a method of Base) through a struct that embeds
    Base, `s` being declared of that struct's type."""
    owner = target.definition.scope.split(".")[-1]
    qualifier = use.qualifier or ""
    if not owner or not re.fullmatch(r"\w+", qualifier):
        return False
    declared = where.types_at(use.line).get(qualifier)
    if declared is None or declared == owner:
        return False
    directories = {posixpath.dirname(where.path), posixpath.dirname(target.path)}
    seen: set[str] = set()
    frontier = [declared]
    for _ in range(_DEPTH):
        embedded = {e for name in frontier if name not in seen for e in _embedded(name, directories, modules)}
        seen |= set(frontier)
        if owner in embedded:
            return True
        frontier = sorted(embedded - seen)
    return False


def _embedded(name: str, directories: set[str], modules: Modules) -> set[str]:
    """The types a struct of these packages embeds (its fields without a name)."""
    out: set[str] = set()
    for directory in sorted(directories):
        for path in modules.go_files(directory):
            there = modules.read(path)
            if there is None:
                continue
            for d in there.definitions:
                if d.name == name and d.kind == "type" and "struct" in d.signature:
                    body = there.lines[d.start:d.end - 1]
                    out |= {m.group(1) for line in body if (m := _EMBEDDED.match(line))}
    return out
