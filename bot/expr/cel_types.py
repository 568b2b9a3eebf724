"""CEL's type rules, checked before an expression is accepted: `pr.additions > "100"` is an error
of the configuration (`cel-type`, at the comparison), not a "no such overload" in every plan.

The type of every `pr` field is known (`bot.expr.pr_fields`), so the operators and functions an
expression applies can be checked against CEL's standard overloads: comparison of like types (CEL
has no `int < double` nor `int == string`), arithmetic of like numbers (no `int + double`),
logical operators on booleans, `in` over a list or a map of the right item type, `size` of text,
bytes, lists and maps, the string methods on strings, the macros over lists and maps with a
boolean condition, field selection on maps alone. What cannot be known statically is `dyn` and
passes everything (the value of a heterogeneous list, a conditional of two types), and `null`
compares with anything but a number (celpy refuses `1 == null` whatever `pr` is): no valid
expression is refused. Conversions (`int()`, `string()`, …)
are left to run time: their argument rules are celpy's, not worth a second copy here.

Runs after `bot.expr.cel_bounds`, which has already refused unknown names, fields and functions
and bounded the tree's depth (so the recursion here is bounded too).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from bot.expr.cel_ast import Binary, Call, Cond, Ident, Index, ListLit, Literal, MapLit, Node, Pos, Select, Unary
from bot.expr.cel_bounds import MACROS, TYPE_NAMES, string_value
from bot.expr.pr_fields import PR_FIELDS


@dataclass(frozen=True, slots=True)
class CelType:
    kind: str  # int uint double bool string bytes null timestamp duration type list map dyn
    elem: CelType | None = None  # list items, map values
    key: CelType | None = None  # map keys
    fields: Mapping[str, CelType] | None = None  # a map whose keys are known: `pr`

    def __str__(self) -> str:
        if self.kind == "list":
            return f"list({self.elem or DYN})"
        if self.kind == "map":
            return f"map({self.key or DYN}, {self.elem or DYN})"
        return self.kind


class CelTypeError(ValueError):
    def __init__(self, message: str, pos: Pos) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


DYN = CelType("dyn")
BOOL, INT, STRING = CelType("bool"), CelType("int"), CelType("string")
NUMBERS = {"int", "uint", "double"}
ORDERED = NUMBERS | {"string", "bytes", "bool", "timestamp", "duration"}


def list_of(elem: CelType) -> CelType:
    return CelType("list", elem)


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType("map", value, key)


_PR_TYPES = {
    "int": INT, "string": STRING, "bool": BOOL, "google.protobuf.Timestamp": CelType("timestamp"),
    "list(string)": list_of(STRING), "list(map(string, string))": list_of(map_of(STRING, STRING)),
}
PR_TYPE = CelType("map", DYN, STRING, MappingProxyType({name: _PR_TYPES[t] for name, t in PR_FIELDS.items()}))

# Operator → {(left kind, right kind): result kind}, CEL's standard overloads (lists: `+` below).
_LIKE_NUMBERS = {(k, k): k for k in NUMBERS}
_TIME = {("timestamp", "duration"): "timestamp", ("duration", "duration"): "duration"}
ARITHMETIC: dict[str, dict[tuple[str, str], str]] = {
    "+": {**_LIKE_NUMBERS, ("string", "string"): "string", ("bytes", "bytes"): "bytes", **_TIME,
          ("duration", "timestamp"): "timestamp"},
    "-": {**_LIKE_NUMBERS, **_TIME, ("timestamp", "timestamp"): "duration"},
    "*": _LIKE_NUMBERS, "/": _LIKE_NUMBERS, "%": {("int", "int"): "int", ("uint", "uint"): "uint"},
}
_VERBS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "%": "take the remainder of"}
STRING_METHODS = {"contains", "startsWith", "endsWith", "matches"}
_DURATION_GETTERS = {"getHours", "getMilliseconds", "getMinutes", "getSeconds"}


def check_types(root: Node) -> CelType:
    """The expression's type; CelTypeError at the first operator or call its operands do not fit."""
    return _Checker().visit(root, {})


def compatible(a: CelType, b: CelType) -> bool:
    """Whether a value of type `a` may equal one of type `b` (list and map types, item by item)."""
    if "dyn" in (a.kind, b.kind):
        return True
    if a.kind != b.kind:
        return False
    pairs = ((a.elem, b.elem), (a.key, b.key)) if a.kind in ("list", "map") else ()
    return all(compatible(x or DYN, y or DYN) for x, y in pairs)


def join(a: CelType, b: CelType) -> CelType:
    """What a conditional or a list literal of both may yield."""
    if a == b:
        return a
    if a.kind == b.kind == "list":
        return list_of(join(a.elem or DYN, b.elem or DYN))
    if a.kind == b.kind == "map":
        return map_of(join(a.key or DYN, b.key or DYN), join(a.elem or DYN, b.elem or DYN))
    return a if a.kind == b.kind and a.kind != "map" else DYN


def spelled(node: Node, kind: CelType) -> str:
    """`int (pr.additions)`, `string ("100")`: the type, and the operand when it is short."""
    text = _spelling(node)
    return f"{kind} ({text})" if text and len(text) <= 40 else str(kind)


def _spelling(node: Node) -> str | None:
    if isinstance(node, Ident):
        return node.name
    if isinstance(node, Literal):
        return node.text
    if isinstance(node, Select):
        operand = _spelling(node.operand)
        return f"{operand}.{node.field}" if operand else None
    return None


def start(node: Node) -> Pos:
    """Where a sub-expression begins (a selection's own position is its field name's)."""
    while True:
        if isinstance(node, Select | Index):
            node = node.operand
        elif isinstance(node, Call) and node.target is not None:
            node = node.target
        else:
            return node.pos


class _Checker:
    def visit(self, node: Node, scope: dict[str, CelType]) -> CelType:
        method = getattr(self, f"_{type(node).__name__.lower()}")
        return method(node, scope)

    def _literal(self, node: Literal, scope) -> CelType:
        return CelType(node.kind)

    def _ident(self, node: Ident, scope: dict[str, CelType]) -> CelType:
        if node.name in scope:
            return scope[node.name]
        return PR_TYPE if node.name == "pr" else CelType("type") if node.name in TYPE_NAMES else DYN

    def _select(self, node: Select, scope) -> CelType:
        operand = self.visit(node.operand, scope)
        return self._member(node.operand, operand, node.field, node.pos)

    def _member(self, operand_node: Node, operand: CelType, name: str, pos: Pos) -> CelType:
        if operand.fields is not None and name in operand.fields:
            return operand.fields[name]
        if operand.kind == "map":
            return operand.elem or DYN
        if operand.kind == "dyn":
            return DYN
        raise CelTypeError(f"cannot select field '{name}' of {spelled(operand_node, operand)}: "
                           f"only maps have fields", pos)

    def _index(self, node: Index, scope) -> CelType:
        operand, index = self.visit(node.operand, scope), self.visit(node.index, scope)
        if operand.kind == "map":
            key = string_value(node.index)
            if key is not None and operand.fields is not None:
                return self._member(node.operand, operand, key, node.pos)
            wanted = operand.key or DYN
        elif operand.kind == "list":
            wanted = INT
        elif operand.kind == "dyn":
            return DYN
        else:
            raise CelTypeError(f"cannot index {spelled(node.operand, operand)}: only lists and maps "
                               f"have items", start(node))
        if not compatible(index, wanted):
            raise CelTypeError(f"cannot index {spelled(node.operand, operand)} with "
                               f"{spelled(node.index, index)}: its index is {wanted}", start(node.index))
        return operand.elem or DYN

    def _unary(self, node: Unary, scope) -> CelType:
        operand = self.visit(node.operand, scope)
        wanted = {"bool"} if node.op == "!" else {"int", "double"}
        if operand.kind not in wanted | {"dyn"}:
            raise CelTypeError(f"operator '{node.op}' cannot take {spelled(node.operand, operand)}: it takes "
                               f"{' or '.join(sorted(wanted))}", node.pos)
        return operand

    def _cond(self, node: Cond, scope) -> CelType:
        self._condition(node.test, self.visit(node.test, scope), "the test of '? :'")
        return join(self.visit(node.then, scope), self.visit(node.otherwise, scope))

    @staticmethod
    def _condition(node: Node, kind: CelType, what: str) -> None:
        if kind.kind not in ("bool", "dyn"):
            raise CelTypeError(f"{what} must be a bool, not {spelled(node, kind)}", start(node))

    def _listlit(self, node: ListLit, scope) -> CelType:
        items = [self.visit(item, scope) for item in node.items]
        elem = items[0] if items else DYN
        for item in items[1:]:
            elem = join(elem, item)
        return list_of(elem)

    def _maplit(self, node: MapLit, scope) -> CelType:
        key: CelType | None = None
        value: CelType | None = None
        for k, v in node.entries:
            kt, vt = self.visit(k, scope), self.visit(v, scope)
            key, value = (kt, vt) if key is None or value is None else (join(key, kt), join(value, vt))
        return map_of(key or DYN, value or DYN)

    def _binary(self, node: Binary, scope) -> CelType:
        a, b = self.visit(node.left, scope), self.visit(node.right, scope)
        if node.op in ("&&", "||"):
            self._condition(node.left, a, f"each side of '{node.op}'")
            self._condition(node.right, b, f"each side of '{node.op}'")
            return BOOL
        if node.op == "in":
            return self._in(node, a, b)
        if node.op in ("==", "!="):
            if compatible(a, b) or "null" in (a.kind, b.kind) and not {a.kind, b.kind} & NUMBERS:
                return BOOL
            raise self._mismatch(node, a, b, "compare", "with")
        if node.op in ("<", "<=", ">", ">="):
            if "dyn" in (a.kind, b.kind) or a.kind == b.kind and a.kind in ORDERED:
                return BOOL
            raise self._mismatch(node, a, b, "compare", "with")
        return self._arithmetic(node, a, b)

    def _arithmetic(self, node: Binary, a: CelType, b: CelType) -> CelType:
        if node.op == "+" and a.kind == b.kind == "list":
            return join(a, b) if compatible(a, b) else list_of(DYN)
        if "dyn" in (a.kind, b.kind):
            return DYN
        result = ARITHMETIC[node.op].get((a.kind, b.kind))
        if result is None:
            raise self._mismatch(node, a, b, _VERBS[node.op], "and")
        return CelType(result)

    def _in(self, node: Binary, a: CelType, b: CelType) -> CelType:
        if b.kind == "dyn":
            return BOOL
        if b.kind not in ("list", "map"):
            hint = "; for text, use contains()" if b.kind == "string" else ""
            raise CelTypeError(f"operator 'in' needs a list or a map on its right, not "
                               f"{spelled(node.right, b)}{hint}", node.pos)
        wanted = (b.elem if b.kind == "list" else b.key) or DYN
        if a.kind == "null" or compatible(a, wanted):
            return BOOL
        raise CelTypeError(f"operator 'in' cannot look for {spelled(node.left, a)} in "
                           f"{spelled(node.right, b)}: its {'items' if b.kind == 'list' else 'keys'} "
                           f"are {wanted}", node.pos)

    @staticmethod
    def _mismatch(node: Binary, a: CelType, b: CelType, verb: str, preposition: str) -> CelTypeError:
        hint = ""
        if {a.kind, b.kind} <= NUMBERS:
            hint = "; CEL does not mix int, uint and double: convert one side with int(), uint() or double()"
        elif {a.kind, b.kind} & NUMBERS and "string" in (a.kind, b.kind):
            hint = "; write a number without quotes, or convert with int() or string()"
        return CelTypeError(f"operator '{node.op}' cannot {verb} {spelled(node.left, a)} {preposition} "
                            f"{spelled(node.right, b)}{hint}", node.pos)

    def _call(self, node: Call, scope: dict[str, CelType]) -> CelType:
        if node.target is not None and node.name in MACROS:
            return self._macro(node, scope)
        operands = ([node.target] if node.target is not None else []) + list(node.args)
        kinds = [self.visit(op, scope) for op in operands]
        if node.name == "size":
            self._argument(node, operands[0], kinds[0], {"string", "bytes", "list", "map"})
            return INT
        if node.name in STRING_METHODS:
            for operand, kind in zip(operands, kinds, strict=True):
                self._argument(node, operand, kind, {"string"})
            return BOOL
        if node.name.startswith("get"):
            allowed = {"timestamp", "duration"} if node.name in _DURATION_GETTERS else {"timestamp"}
            self._argument(node, operands[0], kinds[0], allowed)
            for operand, kind in zip(operands[1:], kinds[1:], strict=True):
                self._argument(node, operand, kind, {"string"})  # a time zone
            return INT
        if node.name == "has":
            return BOOL
        return CelType(node.name) if node.name != "type" else CelType("type")  # conversions

    @staticmethod
    def _argument(node: Call, operand: Node, kind: CelType, allowed: set[str]) -> None:
        if kind.kind in allowed | {"dyn"}:
            return
        role = "be called on" if operand is node.target else "take"
        raise CelTypeError(f"{node.name}() cannot {role} {spelled(operand, kind)}: it takes "
                           f"{' or '.join(sorted(allowed))}", start(operand))

    def _macro(self, node: Call, scope: dict[str, CelType]) -> CelType:
        target = node.target
        assert target is not None and isinstance(node.args[0], Ident)  # cel_bounds checked the form
        source = self.visit(target, scope)
        if source.kind not in ("list", "map", "dyn"):
            raise CelTypeError(f"{node.name}() cannot be called on {spelled(target, source)}: "
                               f"it loops over a list or a map", node.pos)
        variable = (source.elem if source.kind == "list" else source.key) or DYN
        body_node = node.args[1]
        body = self.visit(body_node, {**scope, node.args[0].name: variable})
        if node.name == "map":
            return list_of(body)
        self._condition(body_node, body, f"the condition of {node.name}()")
        return list_of(variable) if node.name == "filter" else BOOL
