"""A small CEL syntax tree, read off celpy's lark parse tree, for the checks that run before an
expression is accepted (names, bounds).

celpy's tree wraps every operand in a chain of single-child grammar nodes (expr → conditionalor
→ … → primary), about ten levels for a plain identifier; the checks want operators, calls and
selections with their positions, so this module collapses those chains. `convert` is recursive:
call `lark_depth` first, so that a hostile nesting is refused before it can exhaust the stack.
"""

from __future__ import annotations

from dataclasses import dataclass

import lark


@dataclass(frozen=True, slots=True)
class Pos:
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Literal:
    pos: Pos
    kind: str  # int | uint | double | string | bytes | bool | null
    text: str  # the source spelling
    length: int  # characters of a string or bytes literal (upper bound), else 0


@dataclass(frozen=True, slots=True)
class Ident:
    pos: Pos
    name: str


@dataclass(frozen=True, slots=True)
class Select:
    pos: Pos  # of the field name
    operand: Node
    field: str


@dataclass(frozen=True, slots=True)
class Call:
    pos: Pos  # of the function name
    target: Node | None  # the receiver of `x.f(...)`, None for `f(...)`
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Index:
    pos: Pos
    operand: Node
    index: Node


@dataclass(frozen=True, slots=True)
class Unary:
    pos: Pos
    op: str  # ! or -
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary:
    pos: Pos
    op: str  # || && < <= > >= == != in + - * / %
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Cond:
    pos: Pos
    test: Node
    then: Node
    otherwise: Node


@dataclass(frozen=True, slots=True)
class ListLit:
    pos: Pos
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class MapLit:
    pos: Pos
    entries: tuple[tuple[Node, Node], ...]


@dataclass(frozen=True, slots=True)
class Unsupported:
    """Syntax celpy parses but our expressions do not take (message construction, `.name`)."""

    pos: Pos
    what: str


Node = Literal | Ident | Select | Call | Index | Unary | Binary | Cond | ListLit | MapLit | Unsupported

_BINARY = {
    "conditionalor": "||", "conditionaland": "&&",
    "relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
    "relation_eq": "==", "relation_ne": "!=", "relation_in": "in",
    "addition_add": "+", "addition_sub": "-",
    "multiplication_mul": "*", "multiplication_div": "/", "multiplication_mod": "%",
}
_LITERAL_KINDS = {
    "INT_LIT": "int", "UINT_LIT": "uint", "FLOAT_LIT": "double", "STRING_LIT": "string",
    "MLSTRING_LIT": "string", "BYTES_LIT": "bytes", "BOOL_LIT": "bool", "NULL_LIT": "null",
}


def lark_depth(tree: lark.Tree) -> int:
    """The depth of celpy's tree, without recursion."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, lark.Tree))
    return deepest


def _pos(item: lark.Tree | lark.Token) -> Pos:
    if isinstance(item, lark.Token):
        return Pos(item.line or 1, item.column or 1)
    meta = item.meta
    return Pos(getattr(meta, "line", 1), getattr(meta, "column", 1))


def _trees(tree: lark.Tree) -> list[lark.Tree]:
    return [child for child in tree.children if isinstance(child, lark.Tree)]


def _exprlist(tree: lark.Tree | None) -> tuple[Node, ...]:
    return tuple(convert(child) for child in _trees(tree)) if tree is not None else ()


def convert(tree: lark.Tree) -> Node:
    data, children = tree.data, tree.children
    if data in ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication"):
        if len(children) == 1:
            return convert(children[0])
        if data == "expr":
            return Cond(_pos(tree), convert(children[0]), convert(children[1]), convert(children[2]))
        left, right = children
        if data in ("conditionalor", "conditionaland"):
            return Binary(_pos(tree), _BINARY[data], convert(left), convert(right))
        return Binary(_pos(left), _BINARY[left.data], convert(left.children[0]), convert(right))
    if data == "unary":
        if len(children) == 1:
            return convert(children[0])
        return Unary(_pos(tree), "!" if children[0].data == "unary_not" else "-", convert(children[1]))
    if data in ("member", "primary", "paren_expr"):
        return convert(children[0])
    return _convert_leafward(tree)


def _convert_leafward(tree: lark.Tree) -> Node:
    data, children = tree.data, tree.children
    if data == "member_dot":
        return Select(_pos(children[1]), convert(children[0]), str(children[1]))
    if data == "member_dot_arg":
        args = _exprlist(children[2]) if len(children) > 2 else ()
        return Call(_pos(children[1]), convert(children[0]), str(children[1]), args)
    if data == "member_index":
        return Index(_pos(tree), convert(children[0]), convert(children[1]))
    if data == "ident":
        return Ident(_pos(children[0]), str(children[0]))
    if data == "ident_arg":
        args = _exprlist(children[1]) if len(children) > 1 else ()
        return Call(_pos(children[0]), None, str(children[0]), args)
    if data == "literal":
        token = children[0]
        if not isinstance(token, lark.Token):  # pragma: no cover - the grammar's literals are tokens
            raise TypeError(f"a CEL literal parsed as {type(token).__name__}")
        kind = _LITERAL_KINDS.get(token.type, "string")
        length = len(token) if kind in ("string", "bytes") else 0
        return Literal(_pos(token), kind, str(token), length)
    if data == "list_lit":
        return ListLit(_pos(tree), _exprlist(children[0]) if children else ())
    if data == "map_lit":
        items = _exprlist(children[0]) if children else ()
        return MapLit(_pos(tree), tuple(zip(items[0::2], items[1::2], strict=False)))
    if data == "member_object":
        return Unsupported(_pos(tree), "message construction (`Type{field: value}`)")
    if data in ("dot_ident", "dot_ident_arg"):
        return Unsupported(_pos(tree), "a leading-dot name (`.name`)")
    return Unsupported(_pos(tree), f"the construct `{data}`")  # pragma: no cover - grammar is closed


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-expressions of a node, for walks."""
    if isinstance(node, Select):
        return (node.operand,)
    if isinstance(node, Call):
        return ((node.target,) if node.target is not None else ()) + node.args
    if isinstance(node, Index):
        return (node.operand, node.index)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Cond):
        return (node.test, node.then, node.otherwise)
    if isinstance(node, ListLit):
        return node.items
    if isinstance(node, MapLit):
        return tuple(part for entry in node.entries for part in entry)
    return ()
