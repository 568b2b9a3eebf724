"""Which definition a name is bound to through the module system (the repository's side of
bot/index/bindings.py): the file an import names, what that module exports under a name (through
re-exports, `__init__.py` imports and `module.exports`), and Go's import paths mapped to
directories by go.mod.

`bound` answers for one use: the definitions it is bound to, as (path, name), or None when the
module system does not say (a name no import binds, a package from outside the repository, a
module that builds its exports in a way not read here); the word-matching rules of
bot/index/resolve.py then decide. Files are read through the callables given (the changed files
at the head, the rest from the index), each once.
"""

from __future__ import annotations

import builtins
import posixpath
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import replace

from bot.index.bindings import DEFAULT, MODULE, Import, go_package_guess, statement_at
from bot.index.packages import Packages, candidates, read_packages
from bot.index.parse import module_references
from bot.index.resolve_rust import rust_aliases, rust_renamed
from bot.index.uses import FileUses, Use
from bot.store.index.model import Located

Target = tuple[str, str]  # (path, name defined there), or (path, MODULE): the module itself
SCRIPT = frozenset({"javascript", "typescript", "tsx"})
MODULE_SCOPES = frozenset({"", "exports", "module.exports"})
_SCRIPT_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mts", ".mjs", ".cts", ".cjs", ".d.ts")
_DEPTH = 6  # re-exports followed at most
_PYTHON_BUILTINS = frozenset(dir(builtins))
_REEXPORT = re.compile(r"\s*export\s+(?:type\s+)?\{")  # `export { a, b as c } from './x'`


class Modules:
    def __init__(self, uses: Callable[[str], FileUses | None], text: Callable[[str], str | None],
                 paths: Callable[[], frozenset[str]], references: Callable[[set[str]], set[str]]) -> None:
        self._uses = uses
        self._references = references
        self._text = text
        self._paths = paths
        self._python: dict[str, str | None] = {}
        self._go_modules: list[tuple[str, str]] | None = None  # (directory, module path), longest first
        self._directories: dict[str, list[str]] | None = None
        self._go_names: dict[str, dict[str, str]] = {}  # file → package name → import path
        self._packages: Packages | None = None
        self._crates: dict[str, str] | None = None
        self._endings: dict[str, str | None] = {}

    def file_ending(self, suffix: str) -> str | None:
        """The shortest path of the repository that ends with `suffix` (`/com/ex/Base.java`)."""
        if suffix not in self._endings:
            found = [p for p in self._paths() if p.endswith(suffix)]
            self._endings[suffix] = min(found, key=len) if found else None
        return self._endings[suffix]

    def read(self, path: str) -> FileUses | None:
        """A file's definitions, imports and bindings (no name's uses); None: no such file."""
        return self._uses(path)

    # --- one use --------------------------------------------------------------------------------

    def bound(self, use: Use, where: FileUses) -> frozenset[Target] | None:
        """The definitions the module system binds `use` (in `where`) to; None: it does not say."""
        if use.binding or use.local:
            return None
        if where.language == "go":
            return self._go_bound(use, where)
        if where.language not in SCRIPT and where.language != "python":
            return None
        if use.qualifier is None and where.language in SCRIPT and use.name in ("exports", "module"):
            return frozenset()  # CommonJS's own module object, in every file
        if use.qualifier is None:
            found = where.bindings.imports.get(use.name) or self._reexported(use, where)
            if found is None and where.language == "python" and use.name in _PYTHON_BUILTINS \
                    and not where.bindings.star and not any(d.name == use.name for d in where.definitions):
                return frozenset()  # a builtin neither imported nor defined here (`str`): no other file's
            if found is None:
                return None
            if found.name == MODULE and where.language in SCRIPT:  # `const merge = require('./merge'); merge()`
                module = self.module_file(where.language, where.path, found.source)
                if module is not None:  # the module's default export, or its exports object: none other
                    return _definitions(self.exported(module, DEFAULT))
            return self._said(where, _definitions(self._through(where, found, _DEPTH)))
        required = re.fullmatch(r"require\(\s*['\"]([^'\"]+)['\"]\s*\)", use.qualifier)
        parts = ["require"] if required else re.split(r"\?\.|\.", use.qualifier)
        head = Import(required.group(1), MODULE) if required else where.bindings.imports.get(parts[0])
        if head is None or not all(re.fullmatch(r"[\w$]+", p) for p in parts):
            return None  # `this.x`, `a().b`, a variable's member
        targets = self._through(where, head, _DEPTH)
        for part in parts[1:]:  # `pkg.mod.f`: a package's submodule
            targets = {t for path, name in targets if name == MODULE for t in self.exported(path, part)}
        modules = [path for path, name in targets if name == MODULE]
        found_all = {t for path in modules for t in self.exported(path, use.name)}
        return self._said(where, _definitions(found_all))

    @staticmethod
    def _reexported(use: Use, where: FileUses) -> Import | None:
        """The name a re-export names on its own line (`export { die } from './errors'`): that
        module's `die`, which the line gives out without binding it in the file."""
        if where.language not in SCRIPT or not where.bindings.exports:
            return None  # most files re-export nothing: no statement to read back
        line = statement_at(where.lines, use.line)
        if not _REEXPORT.match(line):
            return None
        return next((i for i in where.bindings.exports.values() if i.source and i.name == use.name
                     and i.source in line), None)

    def _said(self, where: FileUses, found: frozenset[Target]) -> frozenset[Target] | None:
        """Found nothing module-level: in Python, whose modules' names are their definitions and
        imports, the use is bound to none of the repository's functions (`os.environ.get`,
        `DEFAULT_PORTS.get`, a class's member); a JavaScript module may build its exports in ways
        not read here (`Object.assign(exports, …)`), so there it does not say."""
        return found if found or where.language == "python" else None

    def imported(self, where: FileUses, uses: list[Use]) -> list[Use]:
        """A name an added import brings in (`import { Help } from './help.js'`), as a use of what
        the module system binds it to: the added line names that definition, used or not."""
        out = []
        for use in uses:
            line = statement_at(where.lines, use.line)  # `import {\n  a,\n} from './x'`: all of it
            found = where.bindings.imports.get(use.name) or self._reexported(use, where)
            if use.binding and found is not None and found.source in line \
                    and re.search(r"\bimport\b|\brequire\s*\(|^\s*export\b", line) \
                    and not re.search(rf"(?<![\w$]){re.escape(use.name)}\s*(\bas\b|:)", line):  # not `x as y`, `{x: y}`
                plain = replace(use, binding=False, local=False)
                if self.bound(plain, where):
                    out.append(plain)
        return out

    def resolved(self, use: Use, where: FileUses) -> list[Located]:
        """The definitions the module system binds `use` to (bot/index/modules.py), whatever
        their names: `import merge from './deep'` is deep.js's default export."""
        if where.language == "rust":
            return rust_renamed(use, where, self._uses)
        out = []
        for path, name in sorted(self.bound(use, where) or ()):
            there = self._uses(path)
            out += [Located(path, d) for d in (there.definitions if there else ())
                    if d.name == name and d.scope in MODULE_SCOPES]
        return out

    def aliases(self, where: FileUses, targets: Sequence[Located],
                renamed: frozenset[str] = frozenset()) -> dict[str, list[Located]]:
        """The local names a file binds to `targets` under other names: a default export required
        as `merge`, `import {a as b}`, `from .mod import f as g`, a name a module re-exports one
        under (`renamed`)."""
        if where.language == "rust":
            return rust_aliases(where, targets, self.rust_crates())
        own = {t.definition.name for t in targets}
        names = own | renamed
        defaults = where.language in SCRIPT and any(self._default_export(t) for t in targets)
        out: dict[str, list[Located]] = {}
        for local, found in where.bindings.imports.items():
            if local in own or found.name not in names and not (defaults and found.name in (DEFAULT, MODULE)):
                continue
            bound = self.bound(Use(local, 0, None, False, False, False, None), where) or frozenset()
            hit = [t for t in targets if (t.path, t.definition.name) in bound]
            if hit:
                out[local] = hit
        return out

    def importers(self, targets: Sequence[Located]) -> set[str]:
        """The JavaScript files that import the files of changed default exports, through the
        module references the index keeps (bot/index/parse.py), and the files that import those
        when they re-export it."""
        keys = {k for t in targets if self._default_export(t) for k in module_references(t.path)}
        found: set[str] = set()
        for _ in range(3):
            new = self._references(keys) - found if keys else set()
            found |= new
            keys = set()
            for path in new:
                where = self._uses(path)
                if where is not None and where.bindings.exports and self.aliases(where, targets):
                    keys |= set(module_references(path))
        return found

    def _default_export(self, target: Located) -> bool:
        """`module.exports = (a, b) => …`, `export default function format`, `module.exports = f`."""
        if target.definition.name == DEFAULT:
            return True
        if not target.path.endswith(_SCRIPT_EXTENSIONS) or target.definition.scope not in MODULE_SCOPES:
            return False
        where = self._uses(target.path)
        found = where.bindings.exports.get(DEFAULT) if where is not None else None
        return found is not None and not found.source and found.name == target.definition.name

    # --- modules --------------------------------------------------------------------------------

    def module_file(self, language: str, importer: str, source: str) -> str | None:
        """The repository's file an import of `source` in `importer` names; None: not in it."""
        if language in SCRIPT:
            return self._script_file(importer, source)
        if language == "python":
            return self._python_file(importer, source)
        return None

    def exported(self, path: str, name: str, depth: int = _DEPTH) -> set[Target]:
        """What the module `path` gives under `name`: its own definition, what it re-exports or
        imports under that name, or (a package's `__init__.py`) its submodule."""
        where = self._uses(path)
        if path.endswith("__init__.py") and (where is None or not where.definitions and not where.bindings.imports):
            submodule = self._python_file(path, "." + name)  # an empty `__init__.py`: its submodules
            return {(submodule, MODULE)} if submodule is not None else set()
        if where is None or depth <= 0:
            return set()
        if any(d.name == name and d.scope in MODULE_SCOPES for d in where.definitions):
            return {(path, name)}
        found = where.bindings.exports.get(name)
        if found is not None:
            return self._through(where, found, depth)
        out: set[Target] = set()
        for source in where.bindings.star:
            module = self.module_file(where.language, path, source)
            if module is not None and name != DEFAULT:
                out |= self.exported(module, name, depth - 1)
        if not out and where.language == "python" and posixpath.basename(path) == "__init__.py":
            submodule = self._python_file(path, "." + name)
            if submodule is not None:
                out.add((submodule, MODULE))
        return out

    def _through(self, where: FileUses, found: Import, depth: int) -> set[Target]:
        """What an import or an export names: a name of the file itself (source ''), a module, or
        a name another module exports."""
        if not found.source:
            if any(d.name == found.name and d.scope in MODULE_SCOPES for d in where.definitions):
                return {(where.path, found.name)}
            imported = where.bindings.imports.get(found.name)
            return self._through(where, imported, depth - 1) if imported is not None and depth > 0 else set()
        module = self.module_file(where.language, where.path, found.source)
        if module is None:
            return set()
        if found.name == MODULE:
            return {(module, MODULE)}
        return self.exported(module, found.name, depth - 1)

    def _script_file(self, importer: str, source: str) -> str | None:
        if source.startswith("."):
            return self._script_candidate(posixpath.normpath(posixpath.join(posixpath.dirname(importer), source)))
        if self._packages is None:  # a workspace package, a path alias (bot/index/packages.py)
            self._packages = read_packages(self._paths(), self._text)
        for base in candidates(self._packages, importer, source):
            found = self._script_candidate(base)
            if found is not None:
                return found
        return None  # a package from outside the repository (`lodash`, `node:path`)

    def _script_candidate(self, base: str) -> str | None:
        stem = re.sub(r"\.(m|c)?(j|t)sx?$", "", base)
        paths = self._paths()
        folder = "" if base in (".", "") else base + "/"  # `require('../')` from tests/: the root's index.js
        for candidate in (base, *(stem + e for e in _SCRIPT_EXTENSIONS), *(f"{folder}index{e}" for e in _SCRIPT_EXTENSIONS)):
            if candidate in paths:
                return candidate
        return None

    def _python_file(self, importer: str, source: str) -> str | None:
        """`.utils`, `..pkg.mod`, `.` (the package) from `importer`; an absolute `pkg.mod` under
        a source root (a directory that is not itself a package: `src/`, the top)."""
        key = f"{importer}\0{source}" if source.startswith(".") else source
        if key not in self._python:
            self._python[key] = self._find_python(importer, source)
        return self._python[key]

    def _find_python(self, importer: str, source: str) -> str | None:
        paths = self._paths()
        dots = len(source) - len(source.lstrip("."))
        parts = [p for p in source[dots:].split(".") if p]
        if dots:
            base = posixpath.dirname(importer)
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            stem = posixpath.join(base, *parts) if parts else base
            return _python_candidate(stem, paths)
        if not parts:
            return None
        suffix = "/".join(parts)
        found = []
        for path in paths:
            module = path[:-len("/__init__.py")] if path.endswith("/__init__.py") else path[:-3]
            if not path.endswith(".py") or module != suffix and not module.endswith("/" + suffix):
                continue
            root = module[:len(module) - len(suffix)].rstrip("/")
            if not root or f"{root}/__init__.py" not in paths:  # `types` is not click's types.py
                found.append(path)
        return min(found, key=len) if found else None

    # --- Rust -----------------------------------------------------------------------------------

    def rust_crates(self) -> dict[str, str]:
        """The name each crate of the repository is used by (its Cargo.toml's `[lib] name`, else its
        `[package] name`), by its directory: `crates/core` may be `mylib_core` to the others."""
        if self._crates is None:
            self._crates = {}
            for path in self._paths():
                if path == "Cargo.toml" or path.endswith("/Cargo.toml"):
                    try:
                        data = tomllib.loads(self._text(path) or "")
                    except tomllib.TOMLDecodeError:
                        continue
                    name = (data.get("lib") or {}).get("name") or (data.get("package") or {}).get("name")
                    if isinstance(name, str):
                        self._crates[posixpath.dirname(path)] = name
        return self._crates

    # --- Go -------------------------------------------------------------------------------------

    def _go_bound(self, use: Use, where: FileUses) -> frozenset[Target] | None:
        """`pkg.Func`: the package an import binds `pkg` to is a directory of the repository
        (through go.mod's module path), and Func is that directory's; a package from outside the
        repository holds none of its definitions."""
        if use.qualifier is None and not self._modules():
            return None  # no go.mod: a layout not known here (bot/index/resolve.py's rules decide)
        if use.qualifier is None:  # bare: the file's own package, its directory (its tests' files for a test)
            files = [p for p in self._directory(posixpath.dirname(where.path)) if p.endswith(".go")
                     and (where.path.endswith("_test.go") or not p.endswith("_test.go"))]
            dotted = [self.go_directory(source) for source in where.bindings.star]  # `import . "pkg"`
            files += [p for directory in dotted if directory is not None for p in self.go_files(directory)]
            return frozenset((p, use.name) for p in files)
        if not re.fullmatch(r"\w+", use.qualifier):
            return None
        path = self.go_names(where).get(use.qualifier)
        if path is None:
            return None  # a variable, a receiver: not a package
        directory = self.go_directory(path)
        if directory is None:
            return frozenset() if self._modules() else None
        files = [p for p in self._directory(directory) if p.endswith(".go") and not p.endswith("_test.go")]
        return frozenset((p, use.name) for p in files)

    def go_files(self, directory: str) -> list[str]:
        """The Go files of a package (its directory), tests left out."""
        return [p for p in self._directory(directory) if p.endswith(".go") and not p.endswith("_test.go")]

    def go_names(self, where: FileUses) -> dict[str, str]:
        """The names a Go file's imports are used by (an alias, else the package's own name as
        its directory's files declare it) → their import paths."""
        if where.path not in self._go_names:
            names: dict[str, str] = {}
            for local, found in where.bindings.imports.items():
                directory = None if found.written else self.go_directory(found.source)
                names[self._package_name(directory) or local if directory is not None else local] = found.source
            self._go_names[where.path] = names
        return self._go_names[where.path]

    def go_directory(self, import_path: str) -> str | None:
        """The repository's directory of an import path, by the go.mod whose module path prefixes it."""
        for directory, module in self._modules():
            if import_path == module or import_path.startswith(module + "/"):
                return posixpath.join(directory, import_path[len(module):].strip("/")).strip("/")
        return None

    def _modules(self) -> list[tuple[str, str]]:
        if self._go_modules is None:
            found = []
            for path in self._paths():
                if path.endswith("go.mod") and (path == "go.mod" or path.endswith("/go.mod")):
                    match = re.search(r"^module\s+\"?([^\s\"]+)", self._text(path) or "", re.M)
                    if match:
                        found.append((posixpath.dirname(path), match.group(1)))
            self._go_modules = sorted(found, key=lambda m: -len(m[1]))
        return self._go_modules

    def _directory(self, directory: str) -> list[str]:
        if self._directories is None:
            self._directories = {}
            for path in sorted(self._paths()):
                self._directories.setdefault(posixpath.dirname(path), []).append(path)
        return self._directories.get(directory, [])

    def _package_name(self, directory: str) -> str | None:
        for path in self._directory(directory):
            if path.endswith(".go") and not path.endswith("_test.go"):
                match = re.search(r"^package\s+(\w+)", self._text(path) or "", re.M)
                if match:
                    return match.group(1)
        return go_package_guess(directory) if directory else None


def _definitions(targets: set[Target]) -> frozenset[Target]:
    return frozenset(t for t in targets if t[1] != MODULE)


def _python_candidate(stem: str, paths: frozenset[str]) -> str | None:
    for candidate in (f"{stem}.py", f"{stem}/__init__.py" if stem else "__init__.py", f"{stem}.pyi"):
        if candidate in paths:
            return candidate
    return None
