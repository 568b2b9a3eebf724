"""Which Rust definition a use means (pure), read as rustc resolves paths: a path starts at the
crate's root (`crate::`), the module around the use (`self::`, a module it declares), that
module's parent (`super::`), what a `use` brought in, or another crate; a module is a file
(`src/de.rs`, `src/value/mod.rs`) or an inline `mod` block; and a crate is the directory above
its `src` (each crate of a workspace apart, so `crate::helper` in one is not another's).

A free function is reached bare (in its module, or `use`d) or through a module's path
(`crate::util::helper`), never through a type (`Self::helper`, `Foo::helper`) or a receiver
(`x.helper()`); a method the other way round. So a free function and a method of one name are
told apart by how they are called.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from bot.index.languages import CONTAINER_KINDS
from bot.index.strength import MAYBE, NO, YES
from bot.index.uses import FileUses, Use, module_stem
from bot.store.index.model import Located

_SELF = frozenset({"self", "Self"})
_STANDARD = frozenset({"std", "core", "alloc"})


@dataclass(frozen=True, slots=True)
class Place:
    """Where a path leads: a module of a crate of this repository (its directory: "" the root's),
    or of another crate (by its name)."""

    crate: str
    modules: tuple[str, ...]
    external: bool = False


def rust_module(path: str) -> list[str]:
    """The module path of a Rust file: `src/value/ser.rs` → value::ser, `src/value/mod.rs` →
    value, `src/lib.rs` → the crate root."""
    parts = path.split("/")
    if "src" in parts:
        parts = parts[len(parts) - parts[::-1].index("src"):]
    parts[-1] = posixpath.splitext(parts[-1])[0]
    return parts[:-1] if parts[-1] in ("mod", "lib", "main") else parts


def crate_of(path: str) -> str:
    """The directory of the crate a file belongs to: the one above its last `src` (or above its
    `tests`, `benches`, `examples`, which use that crate); the repository's root else."""
    parts = path.split("/")[:-1]
    if "src" in parts:
        return "/".join(parts[:len(parts) - 1 - parts[::-1].index("src")])
    beside = [i for i, part in enumerate(parts) if part in ("tests", "benches", "examples")]
    return "/".join(parts[:beside[0]]) if beside else ""


def _is_member(target: Located) -> bool:
    d = target.definition
    return d.kind in ("method", "field") or bool(d.scope) and d.scope.split(".")[-1][:1].isupper()


def target_place(target: Located) -> Place:
    """The module a definition lives in: its file's, and the inline modules around it."""
    scope = target.definition.scope.split(".") if target.definition.scope else []
    inline = [s for s in scope if s[:1].islower()]
    return Place(crate_of(target.path), (*rust_module(target.path), *inline))


def module_at(where: FileUses, line: int) -> list[str]:
    """The module a line of a file is in: the file's, and the inline `mod` blocks around it."""
    inline = [d.name for d in where.definitions if d.kind == "module" and d.start < line <= d.end]
    return [*rust_module(where.path), *inline]


def locate(segments: list[str], where: FileUses, line: int, depth: int = 3) -> Place | None:
    """Where a path written in `where` leads (`crate::de`, `super::super::x`, `de` declared or
    `use`d here, `serde::de`); None when it starts at a type (`Self`, `Value`) or cannot be told."""
    if not segments or depth == 0:
        return None
    head, rest = segments[0], segments[1:]
    crate, here = crate_of(where.path), module_at(where, line)
    if head in ("crate", "$crate"):  # `$crate` in a macro: the crate that defines it, this file's
        return Place(crate, tuple(rest))
    if head in ("self", "super"):
        ups = 0
        while segments[ups:ups + 1] == ["super"]:
            ups += 1
        rest = segments[max(ups, 1):]
        return Place(crate, (*here[:len(here) - ups], *rest))
    if head in where.imports:  # `use crate::de;` then `de::from_str`
        return locate([*_split(where.imports[head]), head, *rest], where, line, depth - 1)
    if any(d.kind == "module" and d.name == head for d in where.definitions):
        return Place(crate, (*here, head, *rest))  # a module declared here: `mod de;`
    if head[:1].islower():
        return Place(head, tuple(rest), external=True)  # another crate (or the root's own name)
    return None


def _split(path: str) -> list[str]:
    return [s.strip() for s in re.sub(r"<[^<>]*>", "", path).split("::") if s.strip()]


def place_match(place: Place, where: FileUses, target: Located, names: Mapping[str, str] | None = None) -> int:
    """Whether the module a path leads to holds the target: YES, NO, or MAYBE when it is a
    module above the target's, which may re-export it (`crate::Number` of src/number.rs).

    Another crate's path is the target's when it names the target's crate (the name its
    Cargo.toml gives, in `names` by directory, else its directory's; `-` read as `_`). A root
    crate whose name is not known: from its tests, benches and examples a path of another crate
    may be its (`serde_json::from_str`), a guess; from its own sources it is not (they say
    `crate::`, and `serde::de` is another crate's)."""
    at = target_place(target)
    if place.external:
        if place.crate in _STANDARD:
            return NO
        named = (names or {}).get(at.crate)  # its Cargo.toml's [lib] or [package] name; else its directory's
        name = named if named is not None else posixpath.basename(at.crate) if at.crate else None
        if name is not None and name.replace("-", "_") == place.crate:
            place = Place(at.crate, place.modules)
        elif named is None and not at.crate and "src" not in where.path.split("/")[:-1]:
            return MAYBE if place.modules == at.modules or _above(place.modules, at.modules) else NO
        else:
            return NO
    if place.crate != at.crate:
        return NO
    if place.modules == at.modules:
        return YES
    return MAYBE if _above(place.modules, at.modules) else NO


def _above(outer: tuple[str, ...], inner: tuple[str, ...]) -> bool:
    return inner[:len(outer)] == outer


def import_match(source: str, where: FileUses, target: Located, line: int = 0,
                 names: Mapping[str, str] | None = None) -> int:
    """Whether what `use source::name` brings in is the target (a free function, a constant)."""
    place = locate(_split(source), where, line)
    if place is None:
        return NO if _split(source)[-1:] and _split(source)[-1][:1].isupper() else MAYBE
    return place_match(place, where, target, names)


def rust_refers(use: Use, where: FileUses, target: Located, rivals: list[Located],
                names: Mapping[str, str] | None = None) -> int:
    """Whether `use` (not a binding) in the Rust file `where` means `target`; `names`: the crates'
    names by directory, as their Cargo.toml files give them (a crate's directory name else)."""
    if not _visible(use, where, target):
        return NO
    if use.qualifier is None:
        return _bare(use, where, target, names)
    if not use.path:  # `x.helper()`, `self.n`: a method or a field, never a free function
        return _receiver(use, where, target, rivals) if _is_member(target) else NO
    segments = _split(use.qualifier)
    if not segments:
        return NO
    if _is_member(target):
        return _through_type(use, segments, where, target, names)
    if segments[-1][:1].isupper():
        return NO  # `Self::helper`, `Foo::helper`: a type's associated function, not a module's
    place = locate(segments, where, use.line)
    if place is None:
        return YES if segments[-1] == module_stem(target.path) else NO
    return place_match(place, where, target, names)


def _visible(use: Use, where: FileUses, target: Located) -> bool:
    """A free item without `pub` (`fn helper`, `const TOKEN`) is seen only in its module and the
    modules inside it; a method's visibility is its impl's or trait's, which a path cannot show."""
    d = target.definition
    if _is_member(target) or d.kind == "macro" or re.match(r"(#\[[^\]]*\]\s*)*pub\b", d.signature):
        return True
    at = target_place(target)
    return crate_of(where.path) == at.crate and _above(at.modules, tuple(module_at(where, use.line)))


def _bare(use: Use, where: FileUses, target: Located, names: Mapping[str, str] | None) -> int:
    d = target.definition
    if _is_member(target) or use.local:
        return NO  # a method is called on a receiver or through its type
    if d.kind == "macro":
        return YES  # macro_rules! is seen in every module after it is defined
    at = target_place(target)
    here = tuple(module_at(where, use.line))
    if where.path == target.path and here[:len(at.modules)] == at.modules:
        return YES  # its module, or one inside it (a `mod tests` with `use super::*`)
    if any(o.name == use.name and o.kind not in CONTAINER_KINDS and o.scope == "" for o in where.definitions):
        return NO  # the file defines the name itself: its own
    source = where.imports.get(use.name)
    if source is not None:
        return import_match(source, where, target, use.line, names)
    if where.path == target.path and at.modules[:len(here)] == here:
        return NO  # inside a module below this one, and not `use`d
    best = NO
    for glob in where.globs:  # `use super::*`, `use crate::de::*`
        place = locate(_split(glob), where, use.line)
        best = max(best, MAYBE if place is None else place_match(place, where, target, names))
    return best


def _through_type(use: Use, segments: list[str], where: FileUses, target: Located,
                  names: Mapping[str, str] | None) -> int:
    """A method or associated item through a path: `Self::new`, `Error::syntax`,
    `crate::error::Error::syntax`; not a module's function (`de::from_str`)."""
    owner = target.definition.scope.split(".")[-1]
    last = segments[-1]
    if last[:1].islower() and last not in _SELF:
        return NO
    if last == "Self":
        holder = where.caller_of(use.line)
        return YES if holder is not None and (holder.scope.split(".")[-1] == owner
                                              or _implements(where, holder.start, owner)) else NO
    if last != owner:
        holder = where.caller_of(use.line)
        generic = holder is not None and re.search(rf"[<,]\s*{re.escape(last)}\s*[:,>]", holder.signature)
        return MAYBE if generic else NO  # `T::deserialize(d)` with `T: Deserialize`: any implementor's
    if len(segments) > 1:
        place = locate(segments[:-1], where, use.line)
        return MAYBE if place is None else place_match(place, where, target, names)
    inline = ".".join(module_at(where, use.line)[len(rust_module(where.path)):])
    if where.path == target.path and any(d.name == last and d.kind in CONTAINER_KINDS and d.scope == inline
                                         for d in where.definitions):
        # the module around the use defines the type (`mod capture { struct Backtrace … }`), so its
        # `impl` here is meant, not a type the file's top `use std::backtrace::Backtrace` names
        return YES if target.definition.scope == ".".join(filter(None, (inline, last))) else NO
    source = where.imports.get(last)
    if source is not None:  # MAYBE: `use crate::Error`, perhaps re-exported at the root
        return import_match(source, where, target, use.line, names)
    return YES


def _receiver(use: Use, where: FileUses, target: Located, rivals: list[Located]) -> int:
    """A method or a field through a value: `self.n`, `de.parse_number()`, `value.as_f64()`."""
    owner = target.definition.scope.split(".")[-1]
    qualifier = use.qualifier or ""
    last = re.split(r"::|\.", qualifier)[-1].strip()
    if last == "self":  # its impl's (or trait's); in its file, perhaps a trait's the impl implements
        holder = where.caller_of(use.line)
        if holder is not None and (holder.scope.split(".")[-1] == owner or _implements(where, holder.start, owner)):
            return YES
        return MAYBE if where.path == target.path else NO
    if last.lower() in (owner.lower(), owner.lower() + "s"):
        return YES
    declared = where.types_at(use.line).get(last)
    if declared is not None:
        if declared == owner:
            return YES
        holder = where.caller_of(use.line)  # `formatter: &mut F` with `F: Formatter`, `buf: impl Buf`: any implementor's
        generic = holder is not None and re.search(rf"[<,]\s*{re.escape(declared)}\s*[:,>]|\b(?:impl|dyn)\s+(?:\w+::)*"
                                                   rf"{re.escape(declared)}\b", holder.signature)
        return MAYBE if generic or len(declared) == 1 else NO
    for rival in rivals:
        rival_owner = rival.definition.scope.split(".")[-1]
        if rival_owner and rival_owner != owner and last.lower() == rival_owner.lower():
            return NO
    return MAYBE


def _implements(where: FileUses, line: int, trait: str) -> bool:
    """Whether the `impl` block around `line` implements `trait` (`impl<'a> de::Visitor<'a> for
    X`): `self.m()` and `Self::m()` there reach the trait's provided methods, wherever it is."""
    for number in range(line - 1, 0, -1):
        text = where.lines[number - 1] if number <= len(where.lines) else ""
        if re.match(r"\s*(pub(\([^)]*\))?\s+)?(unsafe\s+)?impl\b", text):
            return re.search(rf"\bimpl\b.*?(?:::|\s|>){re.escape(trait)}\b(?:<.*>)?\s+for\b", text) is not None
        if re.match(r"(pub(\([^)]*\))?\s+)?(fn|struct|enum|trait|mod)\b", text):
            return False  # an item at the top: the line is in no impl block
    return False


def reexported(use: Use, where: FileUses, target: Located, read: Callable[[str], FileUses | None],
               names: Mapping[str, str] | None = None, depth: int = 3) -> int:
    """A use whose path leads to a module above the target's (`use crate::Error`, `crate::Number`),
    followed through that module's `pub use` of the name (lib.rs's `pub use crate::error::Error`):
    YES or NO when it says, MAYBE when it does not. `read` gives a file's uses (None: no such file)."""
    name, segments = use.name, _split(use.qualifier or "")
    if use.qualifier is not None and _is_member(target) and segments:  # `Error::syntax`: where Error is
        name, segments = segments[-1], segments[:-1]
    if not segments:  # bare: where its `use` leads
        source = where.imports.get(name)
        place = locate(_split(source), where, use.line) if source is not None else None
    else:
        place = locate(segments, where, use.line) if use.path else None
    for _ in range(depth):
        if place is None or place.external:
            return MAYBE
        module = next((m for m in map(read, module_files(place)) if m is not None), None)
        source = module.imports.get(name) if module is not None else None
        if module is None or source is None:
            return MAYBE
        found = locate(_split(source), module, 0)
        if found is None or place_match(found, module, target, names) != MAYBE:
            return NO if found is None else place_match(found, module, target, names)
        where, place = module, found
    return MAYBE


def module_files(place: Place) -> list[str]:
    """The files that may hold a module of a crate of this repository."""
    root = f"{place.crate}/src" if place.crate else "src"
    if not place.modules:
        return [f"{root}/lib.rs", f"{root}/main.rs"]
    path = "/".join(place.modules)
    return [f"{root}/{path}.rs", f"{root}/{path}/mod.rs"]


def rust_imported(where: FileUses, uses: list[Use]) -> list[Use]:
    """The names a `use` line brings in (`use crate::error::ErrorCode;`), as uses through the path
    it names: an added `use` names that definition, used or not."""
    out = []
    for use in uses:
        line = where.lines[use.line - 1] if use.line <= len(where.lines) else ""
        source = where.imports.get(use.name)
        if use.binding and source and re.search(r"\buse\b", line) and not re.search(rf"\bas\s+{use.name}\b", line):
            out.append(replace(use, qualifier=source, binding=False, local=False, path=True))
    return out


def rust_aliases(where: FileUses, targets: Sequence[Located],
                 names: Mapping[str, str] | None = None) -> dict[str, list[Located]]:
    """The names a file's `use … as` gives the targets (`use crate::a::helper as h`: h)."""
    out: dict[str, list[Located]] = {}
    for local, found in where.bindings.imports.items():
        hit = [t for t in targets if t.definition.name == found.name and not _is_member(t)
               and import_match(found.source, where, t, 0, names) != NO]
        if hit:
            out[local] = hit
    return out


def rust_renamed(use: Use, where: FileUses, read: Callable[[str], FileUses | None]) -> list[Located]:
    """What a bare use of a renamed import means (`h()` after `use crate::a::helper as h`): the
    definitions of that name in the module the path leads to."""
    found = where.bindings.imports.get(use.name) if use.qualifier is None and not use.local else None
    place = locate(_split(found.source), where, use.line) if found is not None else None
    if found is None or place is None or place.external:
        return []
    out = []
    for path in module_files(place):
        there = read(path)
        out += [Located(path, d) for d in (there.definitions if there is not None else ())
                if d.name == found.name and not d.scope]
    return out

