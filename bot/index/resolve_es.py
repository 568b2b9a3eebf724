"""What a JavaScript or TypeScript use cannot mean, whatever its name matches: rules of the language
that the module system (bot/index/modules.py) does not answer, because no import speaks of the name.

- A module's top-level names are its own. A file with an import, an export or a `require` is a
  module (ES or CommonJS): a name it defines is seen by another file only through an import, so a
  bare use that no import binds (a parameter of a function type, a global such as a test runner's
  `it`, a name the file builds at run time) is not it. A file with none of them is a script, whose
  top-level names are globals (`declare function x(): void` in a `.d.ts` of ambient declarations),
  and may be what a bare use means.
- A declaration is not the code: a TypeScript declaration file (`index.d.ts`) describes code that
  is elsewhere, and an overload's signatures (`write(fn: W): void` before `write(arg) { … }`) the
  implementation that follows them; that code is what a reader opens (and JavaScript reads no
  declarations at all).
- TypeScript keeps types and values apart: a type's name (`atom: Atom<V>`, `ns.Options`) means a
  class, an interface, a type alias, an enum or a namespace, never a function or a variable; and a
  value's name never means an interface or a type alias (`const $Schema` and `interface $Schema`
  may share a name: `new $Schema()` is the constant's, `x: $Schema` the interface's).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.index.bindings import DEFAULT, MODULE, statement_at
from bot.index.uses import FileUses, Use
from bot.store.index.model import Located

if TYPE_CHECKING:
    from bot.index.modules import Modules

SCRIPT = frozenset({"javascript", "typescript", "tsx"})
TYPED = frozenset({"typescript", "tsx"})
_MODULE_SCOPES = frozenset({"", "exports", "module.exports"})
_TYPE_KINDS = frozenset({"class", "interface", "type", "enum", "namespace", "module"})
_TYPE_ONLY = frozenset({"interface", "type"})
_MODULE_SYNTAX = re.compile(r"^\s*(?:import|export)\b|\brequire\s*\(|\bmodule\.exports\b|^\s*exports\.", re.M)
_TYPESCRIPT_FILE = re.compile(r"\.(m|c)?tsx?$")
_IMPORT = re.compile(r"\s*(?:import\b|export\s+(?:type\s+)?[{*])")  # `import …`, `export { … } from`


def type_fits(use: Use, where: FileUses, target: Located) -> bool:
    """Whether a use in a type's place (or a value's) may mean the target's kind of definition."""
    if where.language not in TYPED or use.binding or _IMPORT.match(statement_at(where.lines, use.line)):
        return True  # an import's name (`import { Atom } from './atom'`) may be a type's or a value's
    kind = target.definition.kind
    if use.typed:
        return kind in _TYPE_KINDS
    return not (kind in _TYPE_ONLY and _TYPESCRIPT_FILE.search(target.path) is not None)


def module_private(use: Use, where: FileUses, target: Located, modules: Modules) -> bool:
    """Whether a bare use that no import of `where` binds is kept from the target by the target's
    module: the target is a top-level name of another file that is a module."""
    d = target.definition
    if where.language not in SCRIPT or use.qualifier is not None or target.path == where.path \
            or d.scope not in _MODULE_SCOPES:
        return False
    found = where.bindings.imports.get(use.name)
    if found is not None and found.name in (DEFAULT, MODULE):  # `import utils from './utils'`: a name of its own
        module = modules.module_file(where.language, where.path, found.source)
        return module is not None and module != target.path
    if use.name in where.imports or _mentioned_by_import(use.name, where):
        return False
    there = modules.read(target.path)
    return there is not None and there.language in SCRIPT and is_module(there)


def is_module(where: FileUses) -> bool:
    """A file with an import, an export or a `require`: an ES or CommonJS module."""
    key = ("module",)
    if key not in where.memo:
        where.memo[key] = bool(where.bindings.imports or where.bindings.exports or where.bindings.star) \
            or _MODULE_SYNTAX.search("\n".join(where.lines)) is not None
    return bool(where.memo[key])


def _mentioned_by_import(name: str, where: FileUses) -> bool:
    """A name on a line that imports or requires (`var u = require('./u'), e = u.e`): bound in a
    way the bindings may not read; not to be ruled out."""
    key = ("imported words",)
    if key not in where.memo:
        words: set[str] = set()
        for line in where.lines:
            if re.search(r"^\s*import\b|\brequire\s*\(", line):
                words |= set(re.findall(r"[A-Za-z_$][\w$]*", line))
        where.memo[key] = frozenset(words)
    return name in where.memo[key]


def implementations(locs: list[Located], language: str) -> list[Located]:
    """A TypeScript declaration file (`typings/index.d.ts`, `index.d.cts`) describes code that is
    elsewhere: that code is what a reader opens, when it is among the candidates; and JavaScript,
    which reads no declarations, means that code alone."""
    code = [loc for loc in locs if not loc.path.endswith((".d.ts", ".d.mts", ".d.cts"))]
    return code if code or language == "javascript" else locs


def overload_signature(loc: Located, others: list[Located], lines_of: Callable[[str], list[str] | None]) -> bool:
    """A TypeScript overload's signature (`write(fn: Writer): void` before `write(arg: any) { … }`):
    a declaration of the implementation that follows it, which is what a reader opens."""
    d = loc.definition
    if not loc.path.endswith((".ts", ".tsx", ".mts", ".cts")) or loc.path.endswith((".d.ts", ".d.mts", ".d.cts")):
        return False
    if not any(o.path == loc.path and o.definition.name == d.name and o.definition.scope == d.scope
               and o.definition.start > d.end for o in others):
        return False
    lines = lines_of(loc.path) or []
    return d.end <= len(lines) and not lines[d.end - 1].rstrip().endswith("}")
