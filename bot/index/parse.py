"""A file's definitions and references, read with tree-sitter (pure: text in, FileSymbols out).

Two queries per grammar, run in C: one captures the definition nodes, one every name leaf. Python
then only looks at the captured nodes, not at every node of the tree, which is what keeps a
10,000-file build within a minute. A name that a definition gives itself is not a reference.

What counts as a definition is per language (bot/index/languages.py), with the rules a table
cannot say kept here: a module's values (`FORCED_WIDTH = None`, `export const NOTHING = …`, Go's
`const`/`var`, Rust's `static`, Java's fields and enum constants) but not a function's locals;
JavaScript's assignments to a module object (`exports.x = …`, `res.send = function …`,
`View.prototype.render = …`); methods scoped by the type they belong to (a Go receiver, a Rust
`impl`), and not a Rust `impl`'s associated types (`type Error = Error;` defines nothing to open).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree
from tree_sitter_language_pack import get_language

from bot.index.languages import (
    BODY_FIELDS,
    DEFAULT_EXPORT,
    DEFINITIONS,
    FUNCTION_VALUES,
    NAME_TYPES,
    SCOPE_NODES,
    language_for,
)
from bot.store.index.model import Definition, FileSymbols

MAX_SIGNATURE = 200
# A reference to a JavaScript module by its path, recorded where a file imports it (`require('./merge')`
# in lib/a.js: module:lib/merge), so that the files importing a module are found without its name:
# who calls an anonymous `module.exports = (a, b) => …` is known only by who requires its file.
MODULE_REFERENCE = "module:"
_SCRIPT_SOURCES = re.compile(r"""(?:\bfrom|\brequire\s*\(|\bimport\s*\(?)\s*['"](\.{1,2}(?:/[^'"\n]*)?)['"]""")
_SCRIPT_EXTENSION = re.compile(r"\.(m|c)?(j|t)sx?$")
LOCAL = "(local)"  # the scope of a definition inside an anonymous function
_SPACE = re.compile(r"\s+")
_CLASS_SCOPES = frozenset({"class_definition", "class_body", "class_declaration", "impl_item"})
_FUNCTION_SCOPES = frozenset({
    "function_definition", "function_declaration", "method_declaration", "method_definition", "func_literal",
    "function_item", "arrow_function", "function_expression", "constructor_declaration", "lambda",
})


@dataclass(frozen=True, slots=True)
class _Entry:
    node: Node  # the definition's extent
    name: str
    name_start: int  # the byte where its name is written, or -1 (a scope only)
    kind: str
    scope: str | None = None  # None: the enclosing definitions' names
    emit: bool = True  # False: gives a scope to what it holds, is no definition itself


@cache
def grammar(language: str) -> tuple[Parser, Query, Query]:
    lang: Language = get_language(language)  # type: ignore[arg-type]
    known = [t for t in [*DEFINITIONS[language], *SCOPE_NODES.get(language, {})] if lang.id_for_node_kind(t, True)]
    names = [t for t in sorted(NAME_TYPES) if lang.id_for_node_kind(t, True)]
    defs = Query(lang, "\n".join(f"({t}) @def" for t in known))
    refs = Query(lang, "\n".join(f"({t}) @name" for t in names))
    return Parser(lang), defs, refs


def parse_tree(path: str, text: str) -> tuple[str, Tree] | None:
    """The language and syntax tree of `text` read as `path`; None for a language we do not parse."""
    language = language_for(path)
    if language is None:
        return None
    parser, _, _ = grammar(language)
    return language, parser.parse(text.encode("utf-8", errors="surrogateescape"))


def parse_symbols(path: str, text: str) -> FileSymbols:
    """Definitions and references of `text`, read as the language of `path` (none: empty)."""
    parsed = parse_tree(path, text)
    if parsed is None:
        return FileSymbols(None)
    language, tree = parsed
    entries = definition_entries(language, tree)
    definitions = scoped(entries)
    own = {e.name_start for e in entries if e.emit}
    references: dict[str, set[int]] = {}
    for node in QueryCursor(grammar(language)[2]).captures(tree.root_node).get("name", []):
        if node.start_byte in own or node.child_count:
            continue
        word = text_of(node)
        if len(word) > 1:
            references.setdefault(word, set()).add(node.start_point[0] + 1)
    if language in ("javascript", "typescript", "tsx"):
        for match in _SCRIPT_SOURCES.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            references.setdefault(module_reference(path, match.group(1)), set()).add(line)
    return FileSymbols(language, tuple(definitions),
                       {name: tuple(sorted(lines)) for name, lines in references.items()})


def module_reference(importer: str, source: str) -> str:
    """The reference a relative import of `source` in `importer` makes (`../merge` → module:lib/merge)."""
    path = posixpath.normpath(posixpath.join(posixpath.dirname(importer), source))
    return MODULE_REFERENCE + _SCRIPT_EXTENSION.sub("", path)


def module_references(path: str) -> list[str]:
    """The references by which JavaScript files import `path`: its path without the extension,
    and its directory's when it is an index file (`require('./lib')` is lib/index.js)."""
    stem = _SCRIPT_EXTENSION.sub("", path)
    keys = [MODULE_REFERENCE + stem]
    if posixpath.basename(stem) == "index":
        keys.append(MODULE_REFERENCE + (posixpath.dirname(stem) or "."))
    return keys


def text_of(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", errors="replace") if node is not None else ""


def definition_entries(language: str, tree: Tree) -> list[_Entry]:
    """Every definition node of the tree, with its name and kind, in source order."""
    kinds = {**DEFINITIONS[language], **{t: "scope" for t in SCOPE_NODES.get(language, {})}}
    entries: list[_Entry] = []
    for node in QueryCursor(grammar(language)[1]).captures(tree.root_node).get("def", []):
        entry = _entry(language, node, kinds[node.type])
        if entry is not None:
            entries.append(entry)
    if language in ("javascript", "typescript", "tsx"):
        entries += _module_assignments(tree.root_node)
    entries.sort(key=lambda e: (e.node.start_byte, -e.node.end_byte, not e.emit))
    return entries


def _entry(language: str, node: Node, kind: str) -> _Entry | None:
    """The definition `node` makes, or None when it makes none worth indexing."""
    if kind == "scope":
        field = SCOPE_NODES[language][node.type]
        return _Entry(node, _type_name(node.child_by_field_name(field)), -1, kind, emit=False)
    name = _name_node(node)
    if name is None:
        return None
    scope: str | None = None
    refined = _kind(language, node, kind)
    if refined is None:
        return None
    kind = refined
    if node.type == "function_expression" and node.parent is not None and node.parent.type == "arguments":
        first = node.parent.named_children[0] if node.parent.named_children else None
        if first is not None and first.type == "identifier" and first != node:
            scope, kind = text_of(first), "method"  # `defineGetter(req, 'protocol', function protocol…)`
    if node.type == "method_declaration" and language == "go":
        receiver = node.child_by_field_name("receiver")
        types = [c.child_by_field_name("type") for c in (receiver.named_children if receiver else [])]
        scope = _type_name(types[0]) if types else None
    return _Entry(node, text_of(name), name.start_byte, kind, scope)


def _kind(language: str, node: Node, kind: str) -> str | None:
    """The kind of a definition node after the rules a table cannot say; None: not one."""
    kind_of = node.type
    if kind_of == "variable_declarator" and language not in ("java", "csharp"):
        value = node.child_by_field_name("value")
        if value is not None and value.type in FUNCTION_VALUES:
            return "function"
        if not _top_level(node) or value is None or _is_import(value) or value.type == "member_expression":
            return None  # a local; `require(...)`; an alias (`var join = path.join`)
        declaration = node.parent
        return "constant" if declaration is not None and text_of(declaration).startswith("const") else "variable"
    if kind_of == "function_expression":  # named, and not already named by what it is assigned to
        parent = node.parent
        if parent is None or parent.type in ("variable_declarator", "assignment_expression", "pair",
                                             "public_field_definition", "property_assignment"):
            return None
    if kind_of == "public_field_definition":
        value = node.child_by_field_name("value")
        return kind if value is not None and value.type in FUNCTION_VALUES else None
    if kind_of == "assignment":  # Python: a module's own name, not a local or an attribute
        left = node.child_by_field_name("left")
        if left is None or left.type != "identifier" or not _top_level(node):
            return None
        return "constant" if text_of(left).isupper() else "variable"
    if kind_of in ("const_spec", "var_spec") and not _top_level(node):
        return None
    if kind_of in ("function_item", "function_signature_item") and node.parent is not None \
            and node.parent.type == "declaration_list" and (node.parent.parent is None
                                                            or node.parent.parent.type != "mod_item"):
        return "method"  # inside an impl or a trait, not a module's (`mod de { fn from_str }`)
    if kind_of == "type_item" and node.parent is not None and node.parent.type == "declaration_list":
        return None  # an associated type: `type Error = Error;`
    return kind


def _top_level(node: Node) -> bool:
    """Whether no function or class encloses `node` (a module's own definition)."""
    current = node.parent
    while current is not None:
        if current.type in _FUNCTION_SCOPES or current.type in _CLASS_SCOPES:
            return False
        current = current.parent
    return True


def _is_import(value: Node) -> bool:
    """`require('x')`, a member of one (`require('./utils').compileTrust`), or a call of one
    (`require('debug')('express')`)."""
    current: Node | None = value
    while current is not None and current.type in ("member_expression", "call_expression"):
        if current.type == "call_expression" and text_of(current.child_by_field_name("function")) == "require":
            return True
        current = current.child_by_field_name("object" if current.type == "member_expression" else "function")
    return False


def _module_assignments(root: Node) -> list[_Entry]:
    """JavaScript's definitions by assignment at a module's top: `exports.x = …`, `res.send =
    function send …`, `req.get = req.header = function …` (both names), `X.prototype.m = …`.
    `exports` and `module.exports` are the module itself: what they hold is not a member."""
    entries: list[_Entry] = []
    for statement in root.named_children:
        anonymous = statement.child_by_field_name("value") if statement.type == "export_statement" else None
        if anonymous is not None and anonymous.type in FUNCTION_VALUES:  # `export default function () {}`
            kind = "class" if anonymous.type == "class" else "function"
            entries.append(_Entry(statement, DEFAULT_EXPORT, -1, kind, ""))
            continue
        expression = statement.named_children[0] if statement.type == "expression_statement" \
            and statement.named_children else _declared_assignment(statement)
        lefts: list[Node] = []
        while expression is not None and expression.type == "assignment_expression":
            left = expression.child_by_field_name("left")
            if left is not None:
                lefts.append(left)
            expression = expression.child_by_field_name("right")
        if expression is None or expression.type in ("identifier", "member_expression") or _is_import(expression):
            continue  # `exports.x = x`, `exports.Router = Router.x`: a re-export, not a definition
        function = expression.type in FUNCTION_VALUES
        for left in lefts:
            name = left.child_by_field_name("property") if left.type == "member_expression" else None
            if name is None:
                continue
            owner = text_of(left.child_by_field_name("object")).replace(".prototype", "")
            scope = "" if owner in ("exports", "module.exports", "module") else owner
            kind = ("method" if scope else "function") if function else "variable"
            # `module.exports = (a, b) => …`: the module's default export, named where it is required
            named = DEFAULT_EXPORT if function and text_of(left) == "module.exports" else text_of(name)
            entries.append(_Entry(statement, named, name.start_byte, kind, scope))
    return entries


def _declared_assignment(statement: Node) -> Node | None:
    """The assignment a declaration's only variable takes: `var proto = module.exports = function …`."""
    if statement.type not in ("lexical_declaration", "variable_declaration"):
        return None
    declarators = [c for c in statement.named_children if c.type == "variable_declarator"]
    value = declarators[0].child_by_field_name("value") if len(declarators) == 1 else None
    return value if value is not None and value.type == "assignment_expression" else None


def _type_name(node: Node | None) -> str:
    """`Number` of `Number`, `*Command`, `Map<K, V>`, `&'a mut Value`, `de::Error`."""
    text = re.sub(r"<.*>", "", text_of(node)).strip()
    text = re.sub(r"^[&*\s]*('\w+\s+)?(mut\s+)?", "", text)
    return re.split(r"::|\.", text)[-1].strip() if text else ""


def _name_node(node: Node) -> Node | None:
    """The node naming a definition: its `name` field, else down its declarators (C, C++, Java
    fields), else its `left` (a Python assignment), else its first name-typed child (Kotlin)."""
    name = node.child_by_field_name("name")
    if name is not None and name.type in NAME_TYPES:
        return name
    if name is not None and name.type.endswith("_pattern"):
        return None  # `const {a, b} = x`: it binds several names, aliases of x's members, and defines none
    current: Node | None = node.child_by_field_name("declarator")
    while current is not None:
        if current.type in NAME_TYPES:
            return current
        current = current.child_by_field_name("declarator") or current.child_by_field_name("name")
    left = node.child_by_field_name("left")
    if left is not None and left.type in NAME_TYPES:
        return left
    for child in node.named_children:
        if child.type in NAME_TYPES:
            return child
    return None


def _signature(node: Node) -> str:
    body: Any = None
    for field_name in BODY_FIELDS:
        body = node.child_by_field_name(field_name)
        if body is not None:
            break
    if body is None:
        body = next((c for c in node.named_children if c.type.endswith(("body", "block"))), None)
    raw = node.text or b""
    if body is not None and body.start_byte > node.start_byte:
        raw = raw[: body.start_byte - node.start_byte]
    else:
        raw = raw.split(b"\n", 1)[0]
    return _SPACE.sub(" ", raw.decode("utf-8", errors="replace")).strip()[:MAX_SIGNATURE]


def scoped(entries: list[_Entry]) -> list[Definition]:
    """Definitions in source order, each scoped by the definitions (and scope nodes) enclosing it."""
    stack: list[tuple[int, str]] = []  # (end byte, name) of the enclosing definitions
    out: list[Definition] = []
    for entry in entries:
        node = entry.node
        while stack and stack[-1][0] <= node.start_byte:
            stack.pop()
        if entry.emit:
            scope = entry.scope if entry.scope is not None else ".".join(n for _, n in stack)
            if not scope and not stack and not _top_level(node) and entry.kind not in ("class", "struct"):
                scope = LOCAL  # inside an anonymous function (a test's callback): no module's name
            out.append(Definition(entry.name, entry.kind, scope, _signature(node),
                                  node.start_point[0] + 1, node.end_point[0] + 1))
        stack.append((node.end_byte, entry.name))
    return out
