"""Go's rules that read other files: method promotion (a method of an embedded struct is a method
of the struct that embeds it: `type Sub struct { Base }` makes `s.Size()` Base's Size when
`s *Sub`, however deep the embedding goes; the struct is looked up in the packages of the use and
of the method), what the package's functions return and which imported packages lie outside the
repository (for bot/index/go_types.py), through the retrieval's module system
(bot/index/modules.py), which reads each file once; and which files see a test file's names."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from bot.index.go_types import FOREIGN, RESULTS, declared_type, own_results
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
    declared = receiver_type(use, where)
    if not owner or declared in (None, owner, FOREIGN):
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


def receiver_type(use: Use, where: FileUses) -> str | None:
    """The type a Go use's qualifier evaluates to (a variable's, a call's result; FOREIGN: from
    outside the repository), as far as bot/index/go_types.py reads it; None: not known."""
    return declared_type(use.qualifier or "", where.types_at(use.line), where.memo.get(RESULTS, {}))


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


def read_results(where: FileUses, modules: Modules) -> None:
    """Keep in the file's memo what its package's functions and methods return and its structs'
    fields are, and those of the repository's packages it imports (bot/index/go_types.py), so that
    `x := New()` declares x of New's result type wherever New is defined."""
    if RESULTS in where.memo:
        return
    own = posixpath.dirname(where.path)
    results: dict[str, str] = {}
    packages = [(name, modules.go_directory(source)) for name, source in modules.go_names(where).items()]
    for name, directory in [*((n, d) for n, d in packages if d is not None and d != own), (None, own)]:
        for path in modules.go_files(directory):  # the package's own last: its names win
            there = modules.read(path) if path != where.path else where
            if there is not None:
                results |= own_results(there.definitions, _foreign(there, modules), there.lines, name)
    results |= {f"{name}.{FOREIGN}": FOREIGN for name, directory in packages if directory is None}
    where.memo[RESULTS] = results


def _foreign(where: FileUses, modules: Modules) -> frozenset[str]:
    """The names a file uses its imports of packages from outside the repository by (`reflect`,
    `flag` for `flag "github.com/spf13/pflag"`): their values are of none of its types."""
    return frozenset(name for name, source in modules.go_names(where).items() if modules.go_directory(source) is None)


def test_visible(path: str, target: str) -> bool:
    """Whether Go code in `path` can see what `target` defines: a _test.go file's definitions
    are compiled only with its own package's tests (a test type's `String()` is called by no
    other file, whatever calls `x.String()` there)."""
    return not target.endswith("_test.go") or path.endswith("_test.go") \
        and posixpath.dirname(path) == posixpath.dirname(target)
