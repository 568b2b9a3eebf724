"""A file's definitions and references, read with tree-sitter (pure: text in, FileSymbols out).

Two queries per grammar, run in C: one captures the definition nodes, one every name leaf. Python
then only looks at the captured nodes, not at every node of the tree, which is what keeps a
10,000-file build within a minute. A name that a definition gives itself is not a reference.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from tree_sitter import Language, Node, Parser, Query, QueryCursor
from tree_sitter_language_pack import get_language

from bot.index.languages import BODY_FIELDS, DEFINITIONS, FUNCTION_VALUES, NAME_TYPES, language_for
from bot.index.model import Definition, FileSymbols

MAX_SIGNATURE = 200
_SPACE = re.compile(r"\s+")


@cache
def _grammar(language: str) -> tuple[Parser, Query, Query]:
    lang: Language = get_language(language)  # type: ignore[arg-type]
    known = [t for t in DEFINITIONS[language] if lang.id_for_node_kind(t, True)]
    names = [t for t in sorted(NAME_TYPES) if lang.id_for_node_kind(t, True)]
    defs = Query(lang, "\n".join(f"({t}) @def" for t in known))
    refs = Query(lang, "\n".join(f"({t}) @name" for t in names))
    return Parser(lang), defs, refs


def parse_symbols(path: str, text: str) -> FileSymbols:
    """Definitions and references of `text`, read as the language of `path` (none: empty)."""
    language = language_for(path)
    if language is None:
        return FileSymbols(None)
    parser, defs_query, refs_query = _grammar(language)
    tree = parser.parse(text.encode("utf-8", errors="surrogateescape"))
    kinds = DEFINITIONS[language]
    found: list[tuple[Node, Node, str]] = []
    for node in QueryCursor(defs_query).captures(tree.root_node).get("def", []):
        name = _name_node(node)
        if name is None or (node.type == "variable_declarator" and not _binds_function(node)):
            continue
        found.append((node, name, kinds[node.type]))
    found.sort(key=lambda item: (item[0].start_byte, -item[0].end_byte))
    definitions = _with_scopes(found)
    own = {name.start_byte for _, name, _ in found}
    references: dict[str, set[int]] = {}
    for node in QueryCursor(refs_query).captures(tree.root_node).get("name", []):
        if node.start_byte in own or node.child_count:
            continue
        word = _text(node)
        if len(word) > 1:
            references.setdefault(word, set()).add(node.start_point[0] + 1)
    return FileSymbols(language, tuple(definitions),
                       {name: tuple(sorted(lines)) for name, lines in references.items()})


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def _name_node(node: Node) -> Node | None:
    """The node naming a definition: its `name` field, else down its declarators (C, C++), else
    its first name-typed child (Kotlin)."""
    name = node.child_by_field_name("name")
    if name is not None and name.type in NAME_TYPES:
        return name
    current: Node | None = node.child_by_field_name("declarator")
    while current is not None:
        if current.type in NAME_TYPES:
            return current
        current = current.child_by_field_name("declarator") or current.child_by_field_name("name")
    for child in node.named_children:
        if child.type in NAME_TYPES:
            return child
    return None


def _binds_function(node: Node) -> bool:
    value = node.child_by_field_name("value")
    return value is not None and value.type in FUNCTION_VALUES


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


def _with_scopes(found: list[tuple[Node, Node, str]]) -> list[Definition]:
    """Definitions in source order, each scoped by the definitions that enclose it."""
    stack: list[tuple[int, str]] = []  # (end byte, name) of the enclosing definitions
    out: list[Definition] = []
    for node, name, kind in found:
        while stack and stack[-1][0] <= node.start_byte:
            stack.pop()
        word = _text(name)
        out.append(Definition(word, kind, ".".join(n for _, n in stack), _signature(node),
                              node.start_point[0] + 1, node.end_point[0] + 1))
        stack.append((node.end_byte, word))
    return out
