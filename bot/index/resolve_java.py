"""Which Java definition a use means (pure), read as javac binds names: through the using file's
package, its imports (a type `import a.b.C;`, a package `import a.b.*;`, a member `import static
a.b.C.m;` or all of a type's `import static a.b.C.*;`), the types it declares and extends, and
the declared types of its variables.

A package is a directory below some source root: the package `a.b` is any directory ending in
`a/b`. So a multi-module build (`core/src/main/java/a/b/`, `common/src/main/java/a/c/`) needs no
list of its source roots, and a package split over a module's main and test sources is one
package, as the compiler sees it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import replace

from bot.index.languages import CONTAINER_KINDS
from bot.index.strength import MAYBE, NO, YES
from bot.index.uses import FileUses, Use
from bot.store.index.model import Located

# Types every file sees without an import (java.lang): a qualifier naming one is not ours.
_JAVA_LANG = frozenset({
    "Boolean", "Byte", "Character", "Class", "Double", "Enum", "Float", "Integer", "Long", "Math", "Object",
    "Objects", "Short", "String", "StringBuilder", "System", "Thread", "Arrays", "Collections",
})
_GENERICS = re.compile(r"<[^<>]*>")
_PARAMETER = re.compile(r"([\w.]+)(?:<[^()]*?>)?(?:\[\])*(?:\.\.\.)?\s+(\w+)\s*[,)]")
_LOCAL = re.compile(r"(?:^\s*|[;({,]\s*|\bfinal\s+)([A-Z][\w.]*)(?:<[^;=()]*>)?(?:\[\])*\s+([a-z_$][\w$]*)\s*[=;:,)]")
_VAR = re.compile(r"\bvar\s+([a-z_$][\w$]*)\s*=\s*new\s+([A-Z][\w.]*)")


def java_refers(use: Use, where: FileUses, target: Located, rivals: list[Located]) -> int:
    """Whether `use` (not a binding) in the Java file `where` means `target`."""
    if where.path == target.path and use.qualifier in (None, "this"):
        return YES
    if where.path != target.path and re.match(r"(@\w+(\([^)]*\))?\s+)*private\b", target.definition.signature):
        return NO  # a private member is seen only in its top-level class's file
    if target.definition.kind == "constructor":
        return _constructed(use, where, target)
    if use.qualifier is None:
        return _bare(use, where, target)
    return _qualified(use, where, target, rivals)


def _constructed(use: Use, where: FileUses, target: Located) -> int:
    """A constructor is called by `new` of its type (`new Box(1)`, `new Outer.Inner()`): the type
    the file names, with arguments."""
    chain = type_chain(target)
    if use.arguments is None or not chain:
        return NO
    if use.qualifier is None:
        return YES if where.path == target.path or type_is(use.name, where, chain, target.path) == YES else NO
    return YES if type_is(f"{use.qualifier}.{use.name}", where, chain, target.path) == YES else NO


def type_chain(target: Located) -> list[str]:
    """The types that hold a definition, outermost first, and the definition itself when it is a
    type: `Outer.Inner.make` → [Outer, Inner]; the class `Inner` in `Outer` → [Outer, Inner]."""
    d = target.definition
    scope = d.scope.split(".") if d.scope else []
    return [*scope, d.name] if d.kind in CONTAINER_KINDS else scope


def in_package(path: str, package: str) -> bool:
    """Whether a file lies in `package`: its directory ends in the package's (below any source root)."""
    folder = posixpath.dirname(path)
    want = package.replace(".", "/")
    return folder == want or folder.endswith("/" + want)


def import_match(source: str, target: Located) -> int:
    """Whether a full import (`a.b.C`, `a.b.C.m`, `a.b.Outer.Inner`) names the target."""
    chain = type_chain(target)
    whole = chain if target.definition.kind in CONTAINER_KINDS else [*chain, target.definition.name]
    return YES if _names(source, whole, target.path) else NO


def _names(fqn: str, chain: list[str], path: str) -> bool:
    """Whether the fully qualified `fqn` is the type (or member) `chain` of the file at `path`."""
    joined = ".".join(chain)
    if not joined:
        return False
    if fqn == joined:
        return True  # the default package
    return fqn.endswith("." + joined) and in_package(path, fqn[:-len(joined) - 1])


def _same_package(where: FileUses, path: str) -> bool:
    if not where.package:
        return True  # the default package: every type of it, wherever its file lies
    return in_package(path, where.package)


def _own_type(where: FileUses, name: str) -> str | None:
    """The fully qualified name of a type the file declares (top-level or nested) named `name`."""
    for d in where.definitions:
        if d.kind in CONTAINER_KINDS and d.name == name:
            chain = ".".join([*(d.scope.split(".") if d.scope else []), name])
            return f"{where.package}.{chain}" if where.package else chain
    return None


def type_is(expression: str, where: FileUses, chain: list[str], path: str) -> int:
    """Whether a type written in `where` (`Util`, `Outer.Inner`, `com.ex.Util`) is the type
    `chain` of the file at `path`: YES, NO, or MAYBE when the file cannot say (a type of its
    package or of a package it imports whole that is not that one, but perhaps its subclass)."""
    expression = _GENERICS.sub("", _GENERICS.sub("", expression)).strip()
    if not expression or not chain:
        return NO
    head, _, rest = expression.partition(".")
    tail = f".{rest}" if rest else ""
    if head[:1].islower():  # fully qualified: `com.ex.Util`
        return YES if _names(expression, chain, path) else NO
    own = _own_type(where, head)
    source = own or where.imports.get(head)
    if source is not None:
        return YES if _names(source + tail, chain, path) else NO
    parts = expression.split(".")
    if parts == chain[-len(parts):] and (_same_package(where, path) and parts == chain
                                         or any(_names(f"{g}.{expression}", chain, path) for g in where.globs)):
        return YES
    if head in _JAVA_LANG or parts[-1] == chain[-1]:
        return NO  # java.lang's, or a same-named type of another package
    return MAYBE


def _bare(use: Use, where: FileUses, target: Located) -> int:
    chain = type_chain(target)
    if target.definition.kind in CONTAINER_KINDS:
        if len(chain) > 1 and _inherits(where, use.line, chain[:-1], target.path):
            return YES  # a nested type of a supertype: `Builder` in a subclass
        return YES if type_is(use.name, where, chain, target.path) == YES else NO
    source = where.imports.get(use.name)
    if source is not None:  # `import static a.b.C.m;`
        return import_match(source, target)
    if any(_names(g, chain, target.path) for g in where.globs):  # `import static a.b.C.*;`
        return YES
    if _inherits(where, use.line, chain, target.path):
        return YES
    return _case_label(use, where, target) if target.definition.kind == "constant" else NO


def _case_label(use: Use, where: FileUses, target: Located) -> int:
    """An enum's constant is written bare as a switch's case label (`case FIELD:`): it is the
    target's when the switch's subject is declared of the target's enum (MAYBE: of unknown type)."""
    line = where.lines[use.line - 1] if use.line <= len(where.lines) else ""
    if not re.search(rf"\bcase\s+(?:[\w.]+\s*,\s*)*{re.escape(use.name)}\b", line):
        return NO
    holder = where.caller_of(use.line)
    for number in range(use.line - 1, (holder.start if holder else use.line) - 1, -1):
        found = re.search(r"\bswitch\s*\(\s*([\w.]+)\s*\)", where.lines[number - 1])
        if found:
            kind = _declared(where, number).get(found.group(1).removeprefix("this."))
            if kind is None:
                return MAYBE
            return YES if type_is(kind, where, type_chain(target), target.path) == YES else NO  # enums: no subtypes
    return MAYBE


def _qualified(use: Use, where: FileUses, target: Located, rivals: list[Located]) -> int:
    qualifier = (use.qualifier or "").strip()
    chain = type_chain(target)
    if target.definition.kind in CONTAINER_KINDS:  # `Outer.Inner`, `com.ex.Util`
        if len(chain) == 1:
            return YES if qualifier[:1].islower() and in_package(target.path, qualifier) else NO
        return YES if type_is(qualifier, where, chain[:-1], target.path) == YES else NO
    if qualifier in ("this", "super"):
        return YES if _inherits(where, use.line, chain, target.path) else \
            (MAYBE if supertypes(where, use.line) else NO)
    declared = _declared(where, use.line)
    created = re.fullmatch(r"new\s+([\w.]+)\s*(?:<[^()]*>)?\s*\(.*\)", qualifier, re.S)  # `new Spec.Builder()`
    kind = declared.get(qualifier) or (created.group(1) if created else None)  # or a variable's declared type
    if kind is not None or _type_like(qualifier):  # or `Util.helper`, `Outer.Inner.make`, `com.ex.Util.helper`
        found = type_is(kind or qualifier, where, chain, target.path)
        if found != YES and kind is not None and (_dispatched(kind, rivals) or _inherited(kind, where, rivals, target)):
            return MAYBE  # `adapter.adapt(call)` with `CallAdapter adapter`: any implementation's
        if found != MAYBE:
            return found
    last = (kind or qualifier).rsplit(".", 1)[-1].strip()
    owner = chain[-1] if chain else ""
    if kind is None and last.lower() in (owner.lower(), owner.lower() + "s"):  # `fieldSpec.emit`
        return YES
    for rival in rivals:  # the qualifier names another definition's type: theirs
        others = type_chain(rival)
        if others and others[-1] != owner and last.lower() == others[-1].lower():
            return NO
    return NO if _foreign_chain(qualifier, where, [target, *rivals]) else MAYBE


def _foreign_chain(qualifier: str, where: FileUses, candidates: list[Located]) -> bool:
    """Whether a call chain starts at a type of another library (`MethodSpec.methodBuilder(n).build()`
    in google/auto, with javapoet's MethodSpec): imported from a package of another organization
    (its first two names differ from the file's package's) where none of the name's definitions
    lives, so its result is that library's, not this repository's."""
    root = re.match(r"([A-Z]\w*)\s*\.\s*\w+\s*(?:<[^>]*>\s*)?\(", qualifier)
    source = where.imports.get(root.group(1)) if root else None
    if source is None or "." not in source or where.package.count(".") < 1:
        return False
    package = source.rsplit(".", 1)[0]
    if package.split(".")[:2] == where.package.split(".")[:2]:
        return False  # this repository's, perhaps: its result may be any of its types
    return not any(in_package(c.path, package) for c in candidates)


def _inherited(kind: str, where: FileUses, rivals: list[Located], target: Located) -> bool:
    """Whether a variable's declared type, a type of this repository, does not define the method
    itself (`Sub s; s.size()` where only Base defines size): it inherits it, perhaps the target's."""
    name = _GENERICS.sub("", kind).rsplit(".", 1)[-1].strip()
    if any(type_chain(r)[-1:] == [name] for r in rivals):
        return False
    source = where.imports.get(name.split(".")[0]) or _own_type(where, name)
    package = source.rsplit(".", 1)[0] if source and "." in source else where.package
    return any(in_package(c.path, package) for c in [target, *rivals]) if package else False


def _dispatched(kind: str, rivals: list[Located]) -> bool:
    """Whether a variable's declared type declares the method abstract (an interface's, an
    abstract class's): a call through it may run any implementation, the target's among them."""
    name = _GENERICS.sub("", kind).rsplit(".", 1)[-1].strip()
    return any(type_chain(r)[-1:] == [name] and (re.search(r"\babstract\b", r.definition.signature)
                                                  or r.definition.signature.rstrip().endswith(";"))
               for r in rivals)


def _type_like(qualifier: str) -> bool:
    """`Util`, `Outer.Inner`, `com.ex.Util`: a type's name, not a variable (`LOGGER`, `builder`)."""
    last = qualifier.rsplit(".", 1)[-1]
    return bool(re.fullmatch(r"[\w.]+", qualifier)) and last[:1].isupper() and not last.isupper()


def _enclosing_types(where: FileUses, line: int) -> list[str]:
    return [d.signature for d in where.definitions
            if d.kind in CONTAINER_KINDS and d.start <= line <= d.end]


def supertypes(where: FileUses, line: int) -> list[str]:
    """The types the classes around `line` extend or implement, as written."""
    out: list[str] = []
    for signature in _enclosing_types(where, line):
        text = signature
        while _GENERICS.search(text):
            text = _GENERICS.sub("", text)
        found = re.search(r"\b(?:extends|implements)\b(.*)$", text)
        if found:
            out += [t for t in re.findall(r"[A-Za-z_][\w.]*", found.group(1)) if t not in ("extends", "implements")]
    return out


def _inherits(where: FileUses, line: int, chain: list[str], path: str) -> bool:
    """Whether a class around `line` extends or implements the type `chain` (one level)."""
    return any(type_is(t, where, chain, path) == YES for t in supertypes(where, line))


def _declared(where: FileUses, line: int) -> dict[str, str]:
    """The declared types (as written, dotted) of the variables seen at `line`: the fields of the
    classes around it, the parameters of the method holding it, its locals declared before it
    (read once a line: every candidate definition of a name asks)."""
    key = ("java-declared", line)
    if key not in where.memo:
        where.memo[key] = _read_declared(where, line)
    declared: dict[str, str] = where.memo[key]
    return declared


def _fields(where: FileUses) -> dict[str, dict[str, str]]:
    """Each class's fields and their declared types, by the class's scope (`Outer.Inner`)."""
    if "java-fields" not in where.memo:
        out: dict[str, dict[str, str]] = {}
        for d in where.definitions:
            found = re.search(rf"([\w.]+)(?:<.*>)?(?:\[\])*\s+{re.escape(d.name)}\b", d.signature) \
                if d.kind == "field" else None
            if found:
                out.setdefault(d.scope, {})[d.name] = found.group(1)
        where.memo["java-fields"] = out
    fields: dict[str, dict[str, str]] = where.memo["java-fields"]
    return fields


def _read_declared(where: FileUses, line: int) -> dict[str, str]:
    out: dict[str, str] = {}
    fields = _fields(where)
    for c in where.definitions:  # outermost first: an inner class's field hides an outer's
        if c.kind in CONTAINER_KINDS and c.start <= line <= c.end:
            out.update(fields.get(f"{c.scope}.{c.name}" if c.scope else c.name, {}))
    holder = where.caller_of(line)
    if holder is None:
        return out
    inner = holder.signature[holder.signature.find("("):] if "(" in holder.signature else ""
    out.update({name: kind for kind, name in _PARAMETER.findall(inner)})
    for number in range(holder.start, min(line, len(where.lines)) + 1):
        text = where.lines[number - 1]
        out.update({name: kind for kind, name in _LOCAL.findall(text) if kind not in ("return", "new")})
        out.update({name: kind for name, kind in _VAR.findall(text)})
    return out


def java_imported(where: FileUses, uses: list[Use]) -> list[Use]:
    """The names an import line brings in (`import a.b.Util;`, `import static a.b.Util.m;`), as uses
    through the path it names: an added import names that definition, used or not."""
    out = []
    for use in uses:
        line = where.lines[use.line - 1] if use.line <= len(where.lines) else ""
        found = re.match(rf"\s*import\s+(?:static\s+)?([\w.]+)\.{re.escape(use.name)}\s*;", line)
        if use.binding and found:
            out.append(replace(use, qualifier=found.group(1), binding=False, local=False))
    return out
