"""What a Go function's variables are, read from its own lines before a use, and what the file's
package-level variables are: a receiver's declared type says which same-named method a call means
(`std.Printf(…)` is Logger's, not an interface's or another type's, when `var std = New()` and
`func New() *Logger`).

Read from the text (pure): `x := &T{…}`, `x := T{…}`, `x := new(T)`, `var x T`, `var x = &T{…}`,
and `x := F(…)` or `x, err := F(…)` when F's first result is a named type; F is the file's own
function, or one of its package's when the module system has read them (`results`, kept in the
file's memo by bot/index/resolve_go.py). A value made by a package from outside the repository
(`av := reflect.ValueOf(…)`, `var b bytes.Buffer`) is of no type of the repository's (FOREIGN).
Anything else (a map's value, a type assertion, a call of a method) says nothing, and the use stays
a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from bot.store.index.model import Definition

RESULTS = "go results"  # the memo's key: the package's functions' result types (name → type)
FOREIGN = "?"  # a type from outside the repository; `results` maps `pkg.?` to it for such a package
_LEFT = r"^\s*(?:var\s+)?(\w+)(?:\s*,\s*\w+)*\s*(?::=|=)\s*"
_COMPOSITE = re.compile(_LEFT + r"&?(?:(\w+)\.)?([A-Za-z_]\w*)\s*\{")
_NEW = re.compile(_LEFT + r"new\(\s*(?:(\w+)\.)?([A-Za-z_]\w*)\s*\)")
_CALLED = re.compile(_LEFT + r"([\w.]+\((?:[^()]|\([^()]*\))*\)(?:\.\w+\((?:[^()]|\([^()]*\))*\))*)\s*(?://.*)?$")
_DECLARED = re.compile(r"^\s*var\s+(\w+)\s+\*?(?:(\w+)\.)?([A-Za-z_]\w*)\s*(?://.*)?$")
_IN_BLOCK = re.compile(r"^\s+(\w+)\s+\*?(?:(\w+)\.)?([A-Za-z_]\w*)\s*(?://.*)?$")  # `std *Logger` in `var ( … )`
_FIELD = re.compile(r"^\s*(\w+(?:\s*,\s*\w+)*)\s+\*?(?:(\w+)\.)?([A-Za-z_]\w*)\s*(?:`[^`]*`)?\s*(?://.*)?$")
_NOT_TYPES = frozenset({"struct", "interface", "func", "map", "chan", "new", "make", "append", "len", "cap",
                        "string", "error", "any", "bool", "int", "byte", "rune", "float64", "int64", "uint"})


def result_type(signature: str) -> tuple[str | None, str] | None:
    """The named type a function's first result is, with the package it is written with
    (`func New() *Logger` → (None, Logger), `func (c *C) Flags() *flag.FlagSet` → (flag, FlagSet),
    `func Open(p string) (*File, error)` → (None, File)); None for a slice, a map, a builtin or none."""
    rest = signature[signature.find("func") + 4:] if "func" in signature else signature
    rest = rest.lstrip()
    if rest.startswith("("):  # a method's receiver
        rest = rest[_closing(rest) + 1:].lstrip()
    name = re.match(r"\w+\s*(?:\[[^\]]*\])?\s*", rest)  # the name, and type parameters
    if name is None:
        return None
    rest = rest[name.end():]
    if not rest.startswith("("):
        return None
    rest = rest[_closing(rest) + 1:].strip().lstrip("(").strip()
    found = re.match(r"(?:\w+\s+)?\*?(?:(\w+)\.)?([A-Za-z_]\w*)\s*(?:[,)]|$)", rest)
    if found is None or found.group(2) in _NOT_TYPES:
        return None
    return found.group(1), found.group(2)


def _closing(text: str) -> int:
    """The index of the parenthesis closing the one `text` starts with."""
    depth = 0
    for index, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if depth == 0:
            return index
    return len(text)


def own_results(definitions: Iterable[Definition], foreign: frozenset[str] = frozenset(), lines: Sequence[str] = (),
                package: str | None = None) -> dict[str, str]:
    """What these package-level functions (`New`, or `pkg.New` for another `package`) and methods
    (`Command.Flags`) return, and what type the fields of their structs are (`Command.buf`, read
    from `lines`): a type name, or FOREIGN when it is written with a package of `foreign`, from
    outside the repository."""
    out = {}
    for d in definitions:
        if d.kind == "function" and not d.scope or d.kind == "method" and d.signature.startswith("func"):
            found = result_type(d.signature)
            if found is not None:
                key = f"{d.scope}.{d.name}" if d.scope else f"{package}.{d.name}" if package else d.name
                out[key] = FOREIGN if found[0] in foreign else found[1]
        elif d.kind == "type" and "struct" in d.signature:
            for text in lines[d.start:d.end - 1]:
                field = _FIELD.match(text)
                if field is not None and field.group(3) not in _NOT_TYPES:
                    kind = FOREIGN if field.group(2) in foreign else field.group(3)
                    out |= {f"{d.name}.{name}": kind for name in re.split(r"\s*,\s*", field.group(1))}
    return out


def declared_type(qualifier: str, types: Mapping[str, str], results: Mapping[str, str]) -> str | None:
    """The type of what a Go qualifier evaluates to: a variable (`std`), a call of the package's
    function (`New()`), of another package's (`echo.New()`; `reflect.ValueOf(v)`: FOREIGN when it
    is from outside the repository), and the methods' results and fields' types after them
    (`cmd.Flags()`, `c.buf`); None when a step is not known (a map's value, an index)."""
    steps = re.split(r"\.(?![^(]*\))", re.sub(r"\((?:[^()]|\([^()]*\))*\)", "()", qualifier.replace(" ", "")))
    first = steps[0]
    if first.endswith("()"):
        current = results.get(first[:-2])
    elif len(steps) > 1 and steps[1].endswith("()") and f"{first}.{FOREIGN}" in results:
        return FOREIGN  # `reflect.ValueOf(v).X`: a package's value, from outside the repository
    elif first not in types and len(steps) > 1 and f"{first}.{steps[1].rstrip('()')}" in results:
        current, steps = results[f"{first}.{steps[1].rstrip('()')}"], steps[1:]  # `echo.New()`: a package's
    else:
        current = types.get(first)
    for step in steps[1:]:
        if current is None or current == FOREIGN:
            return current
        current = results.get(f"{current}.{step.removesuffix('()')}")  # a method's result, a field's type
    return current


def go_variables(lines: Sequence[str], definitions: Sequence[Definition], holder: Definition | None, line: int,
                 results: Mapping[str, str]) -> dict[str, str]:
    """The types of the variables a Go use at `line` sees: the package-level ones of the file, then
    the holding function's locals declared before the line (nearer ones last, so they win)."""
    functions = {**own_results(definitions), **results}
    types: dict[str, str] = {}
    for d in definitions:
        if d.kind == "variable" and not d.scope and 0 < d.start <= len(lines):
            _read(lines[d.start - 1], functions, types, block=not lines[d.start - 1].lstrip().startswith("var"))
    if holder is not None and holder.kind in ("function", "method"):
        for number in range(holder.start + 1, min(line, holder.end + 1)):
            _read(lines[number - 1], functions, types, block=False)
    return types


def _read(text: str, functions: Mapping[str, str], types: dict[str, str], block: bool) -> None:
    for pattern in (_COMPOSITE, _NEW, _DECLARED, *((_IN_BLOCK,) if block else ())):
        found = pattern.match(text)
        if found and found.group(3) not in _NOT_TYPES:
            package, name = found.group(2), found.group(3)
            types[found.group(1)] = FOREIGN if package and f"{package}.{FOREIGN}" in functions else name
            return
    found = _CALLED.match(text)  # `x := New()`, `v := reflect.ValueOf(i)`, `f := cmd.Flags()`
    if found is not None:
        made = declared_type(found.group(2), types, functions)
        if made is not None:
            types[found.group(1)] = made
