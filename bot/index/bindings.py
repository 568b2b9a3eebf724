"""What a file's imports bind and what its module exports, by name (pure: a syntax tree in, two
maps out), so that a name is resolved through the module system rather than matched as a word.

A binding says which name of which module a local name stands for: `import d from './x'` binds d
to x's `default`, `import * as ns from './y'` and `const u = require('./u')` bind the module itself
(`*`), `const {a, b: c} = require('./q')` binds a and c to q's a and b, `from ..pkg.mod import y
as z` binds z to ..pkg.mod's y, Go's `alias "path"` binds the package. An export says what the
module gives under a name: `export {e as f} from './z'` (f is z's e), `export {h}` (h is the
file's own h, or what it imports as h), `export default k`, `module.exports = {t, u: v}`,
`exports.x = require('./xx').y`. The name `default` is a module's default export: a JavaScript
`module.exports = …` or `export default …` (bot/index/parse.py names an anonymous one so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from bot.index.languages import DEFAULT_EXPORT as DEFAULT
from bot.index.parse import text_of

MODULE = "*"  # the module itself (`import * as ns`, `const u = require('./u')`, `import pkg.mod as m`)
_SCRIPT = frozenset({"javascript", "typescript", "tsx"})


@dataclass(frozen=True, slots=True)
class Import:
    """A name of another module: `source` as the file writes it ('./x', '..pkg.mod', a Go import
    path; '' for the file's own name), and `name` there (a name, DEFAULT or MODULE)."""

    source: str
    name: str
    written: bool = True  # False: Go's package name guessed from the import path, not written


@dataclass
class Bindings:
    imports: dict[str, Import]  # local name → what it stands for
    exports: dict[str, Import]  # exported name → what it is (source '' : the file's own name)
    star: list[str]  # modules whose every export this module re-exports (`export * from`)


def read_bindings(language: str, root: Node, statements: list[Node]) -> Bindings:
    """The bindings of a file, from its import statements (`statements`, anywhere in the file)
    and, for JavaScript, its top-level exports."""
    out = Bindings({}, {}, [])
    for node in statements:
        if language == "python" and node.type in ("import_statement", "import_from_statement"):
            _python(node, out)
        elif language in _SCRIPT and node.type == "import_statement":
            _es_import(node, out)
        elif language in _SCRIPT and node.type == "export_statement":
            _es_export(node, out)
        elif language in _SCRIPT and node.type == "variable_declarator":
            _required(node, out)
        elif language == "rust" and node.type == "use_declaration":
            _rust_renamed(node, out)
        elif language == "go" and node.type == "import_spec":
            path = text_of(node.child_by_field_name("path")).strip('"`')
            alias = text_of(node.child_by_field_name("name"))
            if alias == ".":  # `import . "pkg"`: its exported names are used bare
                out.star.append(path)
            elif alias != "_":
                out.imports[alias or go_package_guess(path)] = Import(path, MODULE, bool(alias))
    if language in _SCRIPT:
        for statement in root.named_children:
            _commonjs_export(statement, out)
    if language == "python":
        out.exports = dict(out.imports)  # a Python module's imported names are its attributes
    return out


def go_package_guess(path: str) -> str:
    """The name a Go package is used by when its directory is not in the repository: the last
    element of its path, without a major version (`/v5`), `go-` or `.go`/`-go` (`gopkg.in/yaml.v3`)."""
    parts = path.split("/")
    last = parts[-2] if len(parts) > 1 and parts[-1][:1] == "v" and parts[-1][1:].isdigit() else parts[-1]
    last = last.split(".")[0] if "." in last else last
    for affix in ("go-", "-go"):
        last = last.removeprefix(affix) if affix.endswith("-") else last.removesuffix(affix)
    return last.replace("-", "_")


def _python(node: Node, out: Bindings) -> None:
    module = text_of(node.child_by_field_name("module_name"))
    for child in node.children_by_field_name("name"):
        aliased = child.type == "aliased_import"
        name = text_of(child.child_by_field_name("name") if aliased else child)
        alias = text_of(child.child_by_field_name("alias")) if aliased else ""
        if node.type == "import_statement":  # `import a.b as m` binds a.b; `import a.b` binds a
            out.imports[alias or name.split(".")[0]] = Import(name if alias else name.split(".")[0], MODULE)
        else:  # `from . import m`: the package's m (an attribute or a submodule)
            out.imports[alias or name] = Import(module, name)
    if node.type == "import_from_statement" and any(c.type == "wildcard_import" for c in node.named_children):
        out.star.append(module)


def _source(node: Node) -> str:
    return text_of(node.child_by_field_name("source")).strip("'\"`")


def _es_import(node: Node, out: Bindings) -> None:
    source = _source(node)
    required_clause = next((c for c in node.named_children if c.type == "import_require_clause"), None)
    if required_clause is not None:  # TypeScript's `import x = require('./y')`: as `const x = require('./y')`
        names = [c for c in required_clause.named_children if c.type == "identifier"]
        strings = [c for c in required_clause.named_children if c.type == "string"]
        if names and strings:
            out.imports[text_of(names[0])] = Import(text_of(strings[0]).strip("'\"`"), MODULE)
        return
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    for child in clause.named_children if clause is not None else ():
        if child.type == "identifier":
            out.imports[text_of(child)] = Import(source, DEFAULT)
        elif child.type == "namespace_import":
            names = [c for c in child.named_children if c.type == "identifier"]
            if names:
                out.imports[text_of(names[-1])] = Import(source, MODULE)
        elif child.type == "named_imports":
            for spec in (c for c in child.named_children if c.type == "import_specifier"):
                name, alias = text_of(spec.child_by_field_name("name")), text_of(spec.child_by_field_name("alias"))
                out.imports[alias or name] = Import(source, name)


def _es_export(node: Node, out: Bindings) -> None:
    source = _source(node)
    value = node.child_by_field_name("value")
    declaration = node.child_by_field_name("declaration")
    is_default = any(c.type == "default" for c in node.children)
    if is_default and value is not None and value.type == "identifier":
        out.exports[DEFAULT] = Import("", text_of(value))
    elif any(c.type == "=" for c in node.children):  # TypeScript's `export = x`: as `module.exports = x`
        assigned = next((c for c in node.named_children if c.type == "identifier"), None)
        if assigned is not None:
            out.exports[DEFAULT] = Import("", text_of(assigned))
    elif is_default and declaration is not None and declaration.child_by_field_name("name") is not None:
        out.exports[DEFAULT] = Import("", text_of(declaration.child_by_field_name("name")))
    for child in node.named_children:
        if child.type == "namespace_export":
            names = [c for c in child.named_children if c.type in ("identifier", "string")]
            if names:
                out.exports[text_of(names[-1]).strip("'\"")] = Import(source, MODULE)
        elif child.type == "export_clause":
            for spec in (c for c in child.named_children if c.type == "export_specifier"):
                name, alias = text_of(spec.child_by_field_name("name")), text_of(spec.child_by_field_name("alias"))
                out.exports[alias or name] = Import(source, name)
    if source and any(c.type == "*" for c in node.children):
        out.star.append(source)


def required(value: Node | None) -> tuple[str, str] | None:
    """What a value takes from `require`: (module, MODULE) for `require('./u')`, (module, 'y') for
    `require('./u').y`; None for anything else."""
    if value is None:
        return None
    if value.type == "member_expression":
        inner = required(value.child_by_field_name("object"))
        if inner is None or inner[1] != MODULE:
            return None
        return inner[0], text_of(value.child_by_field_name("property"))
    if value.type != "call_expression" or text_of(value.child_by_field_name("function")) != "require":
        return None
    arguments = value.child_by_field_name("arguments")
    strings = [c for c in (arguments.named_children if arguments is not None else []) if c.type == "string"]
    return (text_of(strings[0]).strip("'\"`"), MODULE) if strings else None


def _required(node: Node, out: Bindings) -> None:
    found = required(node.child_by_field_name("value"))
    name = node.child_by_field_name("name")
    if found is None or name is None:
        return
    source, taken = found
    if name.type == "identifier":
        out.imports[text_of(name)] = Import(source, taken)
    elif name.type == "object_pattern" and taken == MODULE:  # `const {a, b: c} = require('./q')`
        for part in name.named_children:
            if part.type == "shorthand_property_identifier_pattern":
                out.imports[text_of(part)] = Import(source, text_of(part))
            elif part.type == "pair_pattern" and part.child_by_field_name("value") is not None \
                    and part.child_by_field_name("value").type == "identifier":  # type: ignore[union-attr]
                out.imports[text_of(part.child_by_field_name("value"))] = \
                    Import(source, text_of(part.child_by_field_name("key")))


def _commonjs_export(statement: Node, out: Bindings) -> None:
    """`module.exports = x | require(…) | {a, b: c}`, `exports.a = b | require(…).y` at the top."""
    expression = statement.named_children[0] if statement.type == "expression_statement" \
        and statement.named_children else None
    lefts: list[str] = []
    while expression is not None and expression.type == "assignment_expression":
        lefts.append(text_of(expression.child_by_field_name("left")))
        expression = expression.child_by_field_name("right")
    if expression is None:
        return
    for left in lefts:
        if left in ("module.exports", "exports"):
            _whole_export(expression, out)
        elif left.startswith(("exports.", "module.exports.")):
            value = _value(expression)
            if value is not None:
                out.exports[left.rsplit(".", 1)[-1]] = value


def _whole_export(value: Node, out: Bindings) -> None:
    if value.type == "object":
        for part in value.named_children:
            if part.type == "shorthand_property_identifier":
                out.exports[text_of(part)] = Import("", text_of(part))
            elif part.type == "pair":
                found = _value(part.child_by_field_name("value"))
                if found is not None:
                    out.exports[text_of(part.child_by_field_name("key")).strip("'\"")] = found
        return
    found = _value(value)
    if found is not None and found.name == MODULE:  # `module.exports = require('./lib')`: all of it
        out.star.append(found.source)
        out.exports[DEFAULT] = Import(found.source, DEFAULT)
    elif found is not None:
        out.exports[DEFAULT] = found


def _value(node: Node | None) -> Import | None:
    """What an exported value names: a local (`x`), or a module's name (`require('./a').b`)."""
    if node is None:
        return None
    if node.type == "identifier":
        return Import("", text_of(node))
    found = required(node)
    return Import(*found) if found is not None else None


def _rust_renamed(node: Node, out: Bindings) -> None:
    """Rust's `use crate::a::helper as h;`: h is a's helper (FileUses.imports keeps only the
    module a name comes from, enough when the name is its own)."""
    tree = re.sub(r"^(pub(\([^)]*\))?\s+)?use\s+|;$", "", text_of(node).strip()).strip()
    for path in rust_paths(tree):
        head, _, last = path.rpartition("::")
        name, renamed, local = (part.strip() for part in last.partition(" as "))
        if renamed and name not in ("self", "*") and local not in ("_", name):
            out.imports[local] = Import(head, name)


def rust_paths(tree: str) -> list[str]:
    """`crate::error::{Error, ErrorCode}` → crate::error::Error, crate::error::ErrorCode."""
    tree = tree.strip()
    if "{" not in tree:
        return [tree] if tree else []
    head, _, rest = tree.partition("{")
    inner = rest[:rest.rfind("}")]
    parts, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (char == "{") - (char == "}")
        current += char
    parts.append(current)
    return [p for part in parts if part.strip() for p in rust_paths(head + part.strip())]


_OPENS = re.compile(r"^\s*(?:import|export)\b")
_CLOSES = re.compile(r"\bfrom\s*['\"]|\brequire\s*\(|^\s*import\s*['\"]")


def statement_at(lines: list[str], line: int, most: int = 60) -> str:
    """The text of the import or re-export statement that holds `line` (1-based), its lines joined,
    when it is one written over several lines (`import {\\n  a,\\n  b,\\n} from './x'`); else the
    line itself. A reader of one line of a name list cannot see the module it names."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if _OPENS.match(text) or _CLOSES.search(text):
        start = line if _OPENS.match(text) else next(
            (n for n in range(line - 1, max(0, line - most), -1) if _OPENS.match(lines[n - 1])), None)
    else:
        start = next((n for n in range(line - 1, max(0, line - most), -1) if _OPENS.match(lines[n - 1])
                      or not re.fullmatch(r"\s*(?:type\s+)?[\w$]*(?:\s+as\s+[\w$]+)?\s*,?\s*(?://.*)?", lines[n - 1])),
                     None)
        start = start if start is not None and _OPENS.match(lines[start - 1]) else None
    if start is None:
        return text
    end = next((n for n in range(start, min(len(lines), start + most) + 1) if _CLOSES.search(lines[n - 1])), None)
    return "\n".join(lines[start - 1:end]) if end is not None and end >= line else text
