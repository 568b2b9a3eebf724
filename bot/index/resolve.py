"""Which definition a use means, when several share its name.

A name is matched to a definition by what the using file says about it, as far as tree-sitter
shows it: the use's qualifier (`res.send` is `res`'s, `crate::raw::TOKEN` is raw.rs's,
`Error::syntax` is `impl Error`'s, `formatting.FORCED_WIDTH` is the module's), the file's imports
(`from .termui import getchar`, `var compileTrust = require('./utils').compileTrust`,
`use crate::number::Number`), its package (Go and Java see their directory's names bare), and
the declared types of the variables in the function that holds the use (`cmd *cobra.Command`,
`CodeBlock initializer`, `self` in `impl Number`). The answer is YES (the file says so), MAYBE
(nothing says otherwise: a receiver of unknown type) or NO (the file says it is something else:
another module, another type, a local). Java and Rust bind names by their own rules, in
bot/index/resolve_java.py (packages below source roots, imports of types and static members) and
bot/index/resolve_rust.py (crate, self and super paths, workspaces' crates). The module system of
Python, JavaScript, TypeScript and Go (bot/index/modules.py: imports followed through re-exports to
the file that defines a name) answers first when `refers` is given it, and through it the rules
that read other files: Rust's `pub use` re-exports and crate names, Java's supertypes past one
level (bot/index/resolve_java_inherit.py), Go's promoted methods (bot/index/resolve_go.py), calls
through an interface (bot/index/dispatch.py) and through a subclass in Python, JavaScript and
TypeScript (bot/index/resolve_script.py); the rules here are pure.
"""

from __future__ import annotations

import posixpath
import re

from bot.index.dispatch import LANGUAGES as DISPATCHED
from bot.index.dispatch import through_interface
from bot.index.languages import CONTAINER_KINDS, family, language_for
from bot.index.modules import Modules
from bot.index.parse import LOCAL
from bot.index.resolve_es import module_private, type_fits
from bot.index.resolve_go import promoted, read_results, receiver_type, test_visible
from bot.index.resolve_java import import_match, java_imported, java_refers
from bot.index.resolve_java_inherit import inherited
from bot.index.resolve_rust import reexported, rust_imported, rust_module, rust_refers
from bot.index.resolve_script import LANGUAGES as SUBCLASSED
from bot.index.resolve_script import inherited_through, overridden_through, through_super
from bot.index.strength import MAYBE, NO, YES
from bot.index.uses import FileUses, Use, module_stem
from bot.store.index.model import Located

__all__ = ["MAYBE", "NO", "YES", "imported_paths", "is_container", "is_member", "module_match", "refers",
           "rust_module"]
_SELF = frozenset({"this", "self", "Self", "super", "cls"})
_SELF_ALIASES = frozenset({"self", "that", "_this", "me"})  # JavaScript's `var self = this`
_MODULE_SCOPES = frozenset({"", "exports", "module.exports"})
_SCRIPT = frozenset({"javascript", "typescript", "tsx"})


def is_member(loc: Located) -> bool:
    """A method or field: defined inside a class, a type's methods, or a JavaScript object other
    than the module (`res.send`), so used through a receiver."""
    d = loc.definition
    if d.scope in _MODULE_SCOPES:
        return False
    if d.kind in ("method", "field", "constructor", "property"):
        return True
    # Inside a type (a Python method, a class's constant) it is one; inside a function or a
    # module (`mod de { fn from_str }`) it is not.
    return d.scope.split(".")[-1][:1].isupper()


def refers(use: Use, where: FileUses, target: Located, rivals: list[Located], modules: Modules | None = None) -> int:
    """Whether `use`, in the file `where`, means `target`; `rivals`: the other definitions of the
    same name (a qualifier that names one of their types says the use is theirs). With `modules`
    (the repository's files, bot/index/modules.py), what the module system binds the use to
    decides first (Python, JavaScript, TypeScript, Go), and a Rust path to a module that re-exports
    the name (lib.rs's `pub use crate::error::Error`) is followed there."""
    if use.binding or family(where.language) != family(language_for(target.path)):
        return NO  # a binding; a webpack config's `resolve` is no Rust function's caller
    if not type_fits(use, where, target):
        return NO  # a TypeScript type name means a type, a value name a value (bot/index/resolve_es.py)
    if where.language == "go":
        if not test_visible(where.path, target.path):
            return NO  # what a _test.go file defines only its package's tests see
        if modules is not None:
            read_results(where, modules)  # `std := New()`: std's type is New's result (bot/index/go_types.py)
    bound = modules.bound(use, where) if modules is not None else None
    if bound is not None and (bound or not is_member(target)):
        d = target.definition
        return YES if (target.path, d.name) in bound and d.scope in _MODULE_SCOPES else NO
    if bound is None and modules is not None and module_private(use, where, target, modules):
        return NO  # another module's own name, which this file does not import (bot/index/resolve_es.py)
    if where.language == "java":
        strength = java_refers(use, where, target, rivals)
        if strength != YES and modules is not None and inherited(use, where, target, modules):
            return YES  # `size()` in C, C extends B, B extends A (bot/index/resolve_java_inherit.py)
        return strength
    if where.language == "rust":
        names = modules.rust_crates() if modules is not None else None
        strength = rust_refers(use, where, target, rivals, names)
        return reexported(use, where, target, modules.read, names) if strength == MAYBE and modules is not None \
            else strength
    if use.qualifier is None:
        return _bare(use, where, target)
    if modules is not None and where.language in SUBCLASSED and is_member(target) \
            and re.sub(r"\(\s*\)$", "", use.qualifier.strip()) == "super":  # `super().setup()`, `super.init()`
        return YES if through_super(use, where, target, modules) else NO
    strength = _qualified(use, where, target, rivals)
    if strength == NO and modules is not None and is_member(target):
        return _through_declared_type(use, where, target, rivals, modules)
    return strength


def _through_declared_type(use: Use, where: FileUses, target: Located, rivals: list[Located],
                           modules: Modules) -> int:
    """A member call whose receiver is declared of another type than the member's own may still
    reach it through what that type is made of, read from other files."""
    if where.language == "go" and promoted(use, where, target, modules):
        return YES  # `s.Size()`, s of a struct embedding Size's type (bot/index/resolve_go.py)
    if where.language in DISPATCHED and through_interface(use, where, target, rivals, modules):
        return MAYBE  # `c.JSON()`, c of an interface declaring JSON (bot/index/dispatch.py)
    if where.language in SUBCLASSED and inherited_through(use, where, target, modules):
        return YES  # `s.parse()`, s of a class extending parse's (bot/index/resolve_script.py)
    if where.language in SUBCLASSED and overridden_through(use, where, target, modules):
        return MAYBE  # `p.type.complete()`, type a ParamType: a subclass's override may run
    return NO


def imported_paths(where: FileUses, uses: list[Use]) -> list[Use]:
    """Java's and Rust's added import lines, as uses through the paths they name (the module
    system of the other languages is bot/index/modules.py's)."""
    if where.language == "java":
        return java_imported(where, uses)
    return rust_imported(where, uses) if where.language == "rust" else []


def _bare(use: Use, where: FileUses, target: Located) -> int:
    language, same_file = where.language, where.path == target.path
    if is_member(target) and not (same_file and _in_function(where, target)):
        # Bare, a member is only reached from inside its class (C#, Kotlin, C++; Java's own rules
        # are bot/index/resolve_java.py's).
        return YES if language in ("csharp", "kotlin", "cpp") and same_file else NO
    if use.local and not (same_file and use.declared == target.definition.start) or not _visible(use, where, target):
        return NO  # a parameter or a local of that name (unless the local is the target: `const f = () => …`)
    if target.definition.kind == "macro":
        return YES  # a Rust macro_rules! or a C macro is seen everywhere after it is defined
    if same_file:
        return YES
    if any(d.name == use.name and d.scope in _MODULE_SCOPES for d in where.definitions):
        return NO  # the file defines the name itself: its own
    source = where.imports.get(use.name)
    if source is not None:
        return module_match(source, where, target)
    if language == "go":  # a package sees its own names bare, another's only through its name
        folder = posixpath.dirname(target.path)
        return YES if folder == posixpath.dirname(where.path) or posixpath.basename(folder) == where.package else NO
    # Not imported, and no parameter or local of that name: a builtin, a star import, a global of
    # the script, a name of the C translation unit... a guess, not a fact.
    return MAYBE


def _in_function(where: FileUses, target: Located) -> bool:
    """A script's function inside a function or a constant (`const Thing = make((inst) => { const
    build = … })`), not a class: a local function, used bare, whatever its holder is called."""
    d = target.definition
    owner = d.scope.split(".")[-1]
    return where.language in _SCRIPT and d.kind == "function" and any(
        p.name == owner and p.kind not in CONTAINER_KINDS and p.start <= d.start and d.end <= p.end
        for p in where.definitions)


def _visible(use: Use, where: FileUses, target: Located) -> bool:
    """A function nested in another (Python, JavaScript) is seen only inside that one."""
    d = target.definition
    if d.scope in _MODULE_SCOPES or where.language not in ("python", "javascript", "typescript", "tsx"):
        return True
    if where.path != target.path:
        return False
    parent = d.scope.split(".")[-1]
    if parent == LOCAL:  # inside an anonymous function (a test's callback), whose extent is not kept:
        # the use is the nearest same-named one's (each callback may declare its own)
        same = [p for p in where.definitions if p.name == d.name and p.scope == d.scope]
        nearest = min(same, key=lambda p: abs(p.start - use.line), default=None)
        return nearest is not None and (nearest.start, nearest.end) == (d.start, d.end)
    return any(p.name == parent and p.start <= d.start and d.end <= p.end and p.start <= use.line <= p.end
               for p in where.definitions)


def _qualified(use: Use, where: FileUses, target: Located, rivals: list[Located]) -> int:
    qualifier = use.qualifier or ""
    last = re.split(r"::|\.|->", qualifier)[-1].strip()
    same_file = where.path == target.path
    d = target.definition
    if not is_member(target):
        head = re.split(r"::|\.|->", qualifier)[0].strip()
        if qualifier in ("exports", "module.exports"):
            return YES if same_file else NO
        if "require(" in qualifier:
            found = re.search(r"require\(\s*['\"]([^'\"]+)", qualifier)
            return module_match(found.group(1), where, target) if found else MAYBE
        if "::" in qualifier:  # a path: crate::raw, super::de, Error
            return _path_match(qualifier, where, target)
        if qualifier in _SELF and same_file and where.language in _SCRIPT and d.scope in ("exports", "module.exports"):
            # `module.exports = { get host () {…}, get hostname () { return this.host } }`: a method
            # of the exported object reaches the others through `this`
            holder = where.caller_of(use.line)
            return YES if holder is not None and holder.scope == d.scope else NO
        if head in _SELF or not _visible(use, where, target):
            return NO  # `self.n.parse()`: a method of what self holds, not a module's function
        source = where.imports.get(head)
        if source is not None:  # an imported module (`formatting.X`, `cobra.X`, `utils.x`)
            return module_match(source, where, target) if qualifier == head else MAYBE
        if last[:1].isupper() and module_stem(target.path) == last:
            return MAYBE  # perhaps a module imported in a way not read here
        if same_file and where.language in _SCRIPT and _attached(where, qualifier, d.name):
            return YES  # `createDebug.enable = enable` in its file: `createDebug.enable(…)` is it
        return NO  # `a.b.x`, a variable's `x`, `ClassName.get`: not a module's function
    owner = d.scope.split(".")[-1]
    if "::" in qualifier and last[:1].islower() and last not in _SELF:
        return NO  # `super::de::from_str`: a module's function, not a type's method
    if last in _SELF:
        if same_file:
            return YES
        if any(o.name == use.name and o.scope and o.kind not in CONTAINER_KINDS for o in where.definitions):
            return NO  # `this.indentLevel` in a class with an indentLevel of its own
        return NO if where.language in ("javascript", "go") else MAYBE
    if where.language == "go" and qualifier in where.imports and qualifier not in where.types_at(use.line):
        return NO  # `fmt.Errorf(…)`: an imported package's function, no type's method
    source = where.imports.get(last)
    if source is not None and last[:1].isupper() and module_match(source, where, target) == NO:
        return NO  # `Error::syntax` with `use crate::io::Error`: io's Error, not error.rs's
    if last.lower() in (owner.lower(), owner.lower() + "s"):  # `Error::syntax`, `res.send`, `fieldSpec.emit`
        return YES
    declared = receiver_type(use, where) if where.language == "go" else where.types_at(use.line).get(last)
    if declared is not None:
        return YES if declared == owner else NO
    for rival in rivals:  # the qualifier names another definition's type or object: theirs
        rival_owner = rival.definition.scope.split(".")[-1]
        if rival_owner and rival_owner != owner and last.lower() == rival_owner.lower():
            return NO
    if where.language in ("javascript", "typescript", "tsx") and owner[:1].islower():
        # A CommonJS object (`res`, `app`, `req`): its methods are called through its own name,
        # `this` in its file, or a `self` that aliases it; another name is another object.
        return MAYBE if last in _SELF_ALIASES and same_file else NO
    return MAYBE


def _attached(where: FileUses, qualifier: str, name: str) -> bool:
    """Whether the file makes its function `name` a property of `qualifier` (`fn.name = name`,
    JavaScript's way of hanging helpers on a function it exports)."""
    key = ("attached", qualifier, name)
    if key not in where.memo:
        pattern = re.compile(rf"^\s*{re.escape(qualifier)}\.{re.escape(name)}\s*=\s*{re.escape(name)}\s*;?\s*$")
        where.memo[key] = any(pattern.match(line) for line in where.lines)
    return bool(where.memo[key])


def module_match(source: str, where: FileUses, target: Located) -> int:
    """Whether the module an import names (`.utils`, `./utils`, `../internal`, `crate::error`,
    `github.com/spf13/cobra`, `com.squareup.javapoet.Util`) is the target's file: YES, NO, or
    MAYBE when it cannot tell (a re-exporting module, the root package of a Go module)."""
    language = where.language
    stem = module_stem(target.path)
    if language == "python":
        last = source.strip(".").split(".")[-1]
        return YES if last == stem or last == "" and _same_dir(where, target) else \
            (MAYBE if source.startswith(".") or "." in source else NO)
    if language in ("javascript", "typescript", "tsx"):
        if not source.startswith("."):
            return NO  # a package (`node:path`, `lodash`), not a file of this repository
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(where.path), source))
        bare = re.sub(r"\.(m|c)?(j|t)sx?$", "", resolved)
        if bare == re.sub(r"\.(m|c)?(j|t)sx?$", "", target.path) or bare == posixpath.dirname(target.path) \
                and module_stem(target.path) == posixpath.basename(bare):
            return YES
        return MAYBE  # perhaps a module that re-exports it (`export * from './utils/common'`)
    if language == "go":
        last = source.rsplit("/", 1)[-1]
        folder = posixpath.basename(posixpath.dirname(target.path))
        if _same_dir(where, target):
            return NO  # a package does not import itself
        return YES if last == folder else (MAYBE if not folder and "." in source.split("/")[0] else NO)
    if language == "java":
        return import_match(source, target)
    return MAYBE


def _path_match(path: str, where: FileUses, target: Located) -> int:
    """A path (`crate::raw`, `super::super::de`, `ns::Error`) against the target: its module is the
    file, its type the scope (C++'s and the like; Rust's are bot/index/resolve_rust.py's)."""
    raw = [s.strip() for s in re.sub(r"<[^<>]*>", "", path).split("::") if s.strip()]
    if raw and raw[0] in ("crate", "self", "super"):
        module = [] if raw[0] == "crate" else rust_module(where.path)
        rest = raw[1:] if raw[0] != "super" else raw
        while rest and rest[0] == "super":
            module, rest = module[:-1], rest[1:]
        resolved = module + rest
        if resolved == rust_module(target.path) or resolved[:-1] == rust_module(target.path) \
                and resolved[-1:] == [target.definition.scope.split(".")[-1]]:
            return YES
        return MAYBE if not resolved else NO  # the crate root re-exports much (`crate::Number`)
    segments = [s for s in raw if s not in ("crate", "self", "super")]
    if not segments:
        return YES if where.path == target.path else MAYBE
    owner = target.definition.scope.split(".")[-1]
    last = re.sub(r"<.*>", "", segments[-1])
    if owner and last == owner:
        return YES
    if last == module_stem(target.path):
        return YES
    if last[:1].isupper():  # a type (`Value::from`): the target is not its
        return NO if owner or is_member(target) else MAYBE
    return NO


def _same_dir(where: FileUses, target: Located) -> bool:
    return posixpath.dirname(where.path) == posixpath.dirname(target.path)


def is_container(loc: Located) -> bool:
    return loc.definition.kind in CONTAINER_KINDS
