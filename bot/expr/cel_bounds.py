"""What a CEL expression may name and how much work it may do, decided before it ever runs.

cel-python has no cost limit, and pure-Python evaluation cannot be interrupted from another
thread, so an expression written to be slow (a comprehension over a large literal, nested loops
over `pr.files`) would stall a worker for minutes. Every expression is therefore checked
statically against the largest `pr` there is (`bot.expr.pr_fields`: 3000 files of up to 4096
characters, 100 labels, a 65,536-character body):

- structure: at most MAX_NODES syntax nodes, MAX_DEPTH levels of nesting, MAX_LOOP_NESTING
  comprehensions inside one another, MAX_LITERAL_ITEMS items in a list or map literal (and the
  source itself at most `bot.expr.cel.MAX_SOURCE_LENGTH` characters);
- cost: an upper bound of the work of one evaluation, in units of about one node evaluation,
  at most COST_LIMIT. Each node costs 1 (a number literal or arithmetic NUMBER_COST, a function
  call CALL_COST); a comprehension costs its range plus, for each of the range's largest
  possible number of items, ITERATION_COST plus its body; scanning text costs one unit per
  SCAN_CHARS characters, building text one per ALLOC_CHARS characters and building a list one
  per ALLOC_ITEMS items; `in` over a list costs one unit per IN_ITEMS items; `matches` adds
  REGEX_COMPILE (RE2: linear in the text, so a pattern cannot backtrack). Both branches of
  `? :`, `&&` and `||` are counted, as celpy evaluates them.

A unit is about one node evaluation, 2–6 µs with celpy's compiled runner on a 2-core machine; a
comprehension step is priced at ITERATION_COST = 2 units, as it measures about 8 µs (priced at 1,
loops over label records ran at twice the time per unit of everything else). COST_LIMIT = 30,000
units keeps the worst accepted expression over the largest `pr` well under a second (about 0.2 s
there; bench/plan.py prints it, tests/expr/test_cel.py runs it), and it builds at most COST_LIMIT ×
ALLOC_CHARS characters. A loop over pr.files with one test fits (`pr.files.all(f,
!f.endsWith(".lock"))` costs 24,003); one with two tests does not: matching files is what a
rule's `paths` globs are for, and they cost next to nothing.

Names are checked here too: `pr` is the only free identifier; fields of `pr` and of its labels are
the declared ones; functions and macros are CEL's standard ones that celpy provides.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass

import lark
import re2
from celpy.evaluation import celbytes, celstr

from bot.expr.cel_ast import (
    Binary,
    Call,
    Cond,
    Ident,
    Index,
    ListLit,
    Literal,
    MapLit,
    Node,
    Pos,
    Select,
    Unary,
    Unsupported,
    children,
)
from bot.expr.cel_shapes import ANY_SCALAR, ANY_WORST, PR_SHAPE, Shape, join, join_all, list_of, record, scalar

MAX_NODES = 200
MAX_DEPTH = 100
MAX_LOOP_NESTING = 2
MAX_LITERAL_ITEMS = 100
COST_LIMIT = 30_000

# Measured with celpy's compiled runner: a node takes 2–6 µs, a number literal or arithmetic about
# twice that (every number is re-wrapped and range-checked), one comprehension step about 8 µs.
ITERATION_COST = 2
NUMBER_COST = 2
CALL_COST = 2  # a function or method call: its result is wrapped anew too
SCAN_CHARS = 4096
ALLOC_CHARS = 256
ALLOC_ITEMS = 64
IN_ITEMS = 4
REGEX_COMPILE = 3
REGEX_SCAN_FACTOR = 4  # RE2 reads text more slowly than str.startswith does
TIME_PARSE = 5

MACROS = {"all", "exists", "exists_one", "map", "filter"}
NUMBERS = {"int", "uint", "double"}
TYPE_NAMES = {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"}
# name → (argument counts as a method `x.f(…)`, as a function `f(…)`)
FUNCTIONS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "size": ((0,), (1,)),
    "contains": ((1,), ()), "startsWith": ((1,), ()), "endsWith": ((1,), ()), "matches": ((1,), (2,)),
    "int": ((), (1,)), "uint": ((), (1,)), "double": ((), (1,)), "bool": ((), (1,)),
    "string": ((), (1,)), "bytes": ((), (1,)), "type": ((), (1,)),
    "timestamp": ((), (1,)), "duration": ((), (1,)), "has": ((), (1,)),
    **{name: ((0, 1), ()) for name in (
        "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getMonth",
        "getHours", "getMilliseconds", "getMinutes", "getSeconds")},
}


class BoundsError(ValueError):
    def __init__(self, code: str, message: str, pos: Pos) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.pos = pos


def _too_complex(message: str, pos: Pos) -> BoundsError:
    return BoundsError("cel-too-complex", message, pos)


def check_structure(root: Node) -> None:
    """Node count and nesting depth (iteratively: the tree may be as deep as the parser allows)."""
    count = 0
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise _too_complex(f"more than {MAX_NODES} operations and operands; split the condition", root.pos)
        if depth > MAX_DEPTH:
            raise _too_complex(f"nested more than {MAX_DEPTH} levels deep", node.pos)
        stack.extend((child, depth + 1) for child in children(node))


@dataclass(frozen=True, slots=True)
class Estimate:
    shape: Shape
    cost: float


def estimate(root: Node) -> Estimate:
    """The value's shape and the cost bound; BoundsError for a name or a bound broken."""
    result = _Estimator().visit(root, {}, 0)
    if result.cost > COST_LIMIT:
        raise _too_complex(
            f"may take too long: its worst case over the largest pull request (3000 files, 100 labels) "
            f"costs about {math.ceil(result.cost):,} units, over the limit of {COST_LIMIT:,}; a test inside a "
            f"macro runs once per item (up to 3000 times over pr.files): match files with the rule's `paths` "
            f"globs or one matches(), and avoid nested loops", root.pos)
    return result


def _suggest(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f"did you mean '{close[0]}'? " if close else ""


class _Estimator:
    def visit(self, node: Node, scope: dict[str, Shape], loops: int) -> Estimate:
        method = getattr(self, f"_{type(node).__name__.lower()}")
        return method(node, scope, loops)

    def _literal(self, node: Literal, scope, loops) -> Estimate:
        if node.kind in ("string", "bytes"):
            literal_value(node)  # an escape celpy cannot decode fails here, not when first evaluated
        return Estimate(Shape(node.kind, node.length), NUMBER_COST if node.kind in NUMBERS else 1)

    def _ident(self, node: Ident, scope: dict[str, Shape], loops) -> Estimate:
        if node.name in scope:
            return Estimate(scope[node.name], 1)
        if node.name == "pr":
            return Estimate(PR_SHAPE, 1)
        if node.name in TYPE_NAMES:
            return Estimate(scalar("type"), 1)
        known = ["pr", *scope]
        raise BoundsError("cel-unknown-field", f"unknown name '{node.name}': {_suggest(node.name, known)}"
                          f"an expression sees `pr` and the variables of its macros", node.pos)

    def _select(self, node: Select, scope, loops) -> Estimate:
        return self._field(self.visit(node.operand, scope, loops), node.field, node.pos)

    def _field(self, operand: Estimate, name: str, pos: Pos) -> Estimate:
        """`operand.name` (or `operand["name"]`), the operand already estimated: visiting it again
        here would double the work at every level of nested record access."""
        shape = operand.shape
        if shape.fields is not None and shape.name:
            found = shape.field(name)
            if found is None:
                fields = sorted(shape.fields)
                raise BoundsError("cel-unknown-field", f"{shape.name} has no field '{name}'; "
                                  f"{_suggest(name, fields)}its fields are: {', '.join(fields)}", pos)
            return Estimate(found, operand.cost + 1)
        if shape.fields is not None:
            return Estimate(shape.field(name) or shape.item, operand.cost + 1)
        return Estimate(shape.elem if shape.kind == "map" and shape.elem else ANY_WORST, operand.cost + 1)

    def _index(self, node: Index, scope, loops) -> Estimate:
        operand, index = self.visit(node.operand, scope, loops), self.visit(node.index, scope, loops)
        cost = operand.cost + index.cost + 1
        shape = operand.shape
        key = string_value(node.index)
        if shape.fields is not None and key is not None:
            return self._field(operand, key, node.index.pos)
        if shape.kind in ("list", "map") or shape.elem is not None:
            return Estimate(shape.item, cost)
        return Estimate(ANY_WORST, cost)

    def _unary(self, node: Unary, scope, loops) -> Estimate:
        operand = self.visit(node.operand, scope, loops)
        return Estimate(scalar("bool") if node.op == "!" else operand.shape, operand.cost + 1)

    def _binary(self, node: Binary, scope, loops) -> Estimate:
        left, right = self.visit(node.left, scope, loops), self.visit(node.right, scope, loops)
        cost = left.cost + right.cost + 1
        a, b = left.shape, right.shape
        if node.op in ("&&", "||"):
            return Estimate(scalar("bool"), cost)
        if node.op == "in":
            if b.kind == "map":
                return Estimate(scalar("bool"), cost + _compare_cost(a, ANY_SCALAR))
            return Estimate(scalar("bool"), cost + b.length * (1 / IN_ITEMS + _compare_cost(a, b.item)))
        if node.op in ("==", "!=", "<", "<=", ">", ">="):
            return Estimate(scalar("bool"), cost + _compare_cost(a, b))
        if node.op == "+":
            length = a.length + b.length
            elem = join_all([s for s in (a.elem, b.elem) if s is not None])
            kind = a.kind if a.kind == b.kind else "any"
            if kind in NUMBERS or kind == "any" and not length:
                return Estimate(Shape(kind, 0), cost - 1 + NUMBER_COST)
            per_unit = ALLOC_ITEMS if kind == "list" else ALLOC_CHARS
            return Estimate(Shape(kind, length, elem), cost + length / per_unit)
        shape = a if a.kind == b.kind else join(a, b)  # - * / %
        return Estimate(shape, cost - 1 + NUMBER_COST)

    def _cond(self, node: Cond, scope, loops) -> Estimate:
        parts = [self.visit(part, scope, loops) for part in (node.test, node.then, node.otherwise)]
        return Estimate(join(parts[1].shape, parts[2].shape), sum(p.cost for p in parts) + 1)

    def _listlit(self, node: ListLit, scope, loops) -> Estimate:
        self._literal_size(len(node.items), node.pos)
        items = [self.visit(item, scope, loops) for item in node.items]
        elem = join_all([i.shape for i in items])
        cost = sum(i.cost for i in items) + 1 + len(items) / ALLOC_ITEMS
        return Estimate(list_of(len(items), elem or ANY_SCALAR), cost)

    def _maplit(self, node: MapLit, scope, loops) -> Estimate:
        self._literal_size(len(node.entries), node.pos)
        cost = 1 + len(node.entries) / ALLOC_ITEMS
        fields: dict[str, Shape] = {}
        values: list[Shape] = []
        for key, value in node.entries:
            k, v = self.visit(key, scope, loops), self.visit(value, scope, loops)
            cost += k.cost + v.cost
            values.append(v.shape)
            name = string_value(key)
            if name is not None:
                fields[name] = v.shape
        if len(fields) == len(node.entries):
            return Estimate(record("", fields), cost)
        return Estimate(Shape("map", len(node.entries), join_all(values)), cost)

    @staticmethod
    def _literal_size(count: int, pos: Pos) -> None:
        if count > MAX_LITERAL_ITEMS:
            raise _too_complex(f"a literal of {count} items; at most {MAX_LITERAL_ITEMS} are allowed", pos)

    def _unsupported(self, node: Unsupported, scope, loops) -> Estimate:
        raise BoundsError("cel-syntax", f"{node.what} is not supported in these expressions", node.pos)

    def _call(self, node: Call, scope: dict[str, Shape], loops: int) -> Estimate:
        if node.target is not None and node.name in MACROS:
            return self._macro(node, scope, loops)
        if node.name not in FUNCTIONS:
            kind = "method" if node.target is not None else "function"
            raise BoundsError("cel-unknown-field", f"unknown {kind} '{node.name}': "
                              f"{_suggest(node.name, sorted(FUNCTIONS) + sorted(MACROS))}"
                              f"use CEL's standard functions and macros", node.pos)
        as_method, as_function = FUNCTIONS[node.name]
        counts = as_method if node.target is not None else as_function
        if len(node.args) not in counts:
            spelled = f"x.{node.name}()" if node.target is not None else f"{node.name}()"
            wanted = " or ".join(map(str, counts)) if counts else "no"
            raise BoundsError("cel-syntax", f"{spelled} takes {wanted} argument(s), not {len(node.args)}"
                              if counts else f"'{node.name}' cannot be called this way", node.pos)
        if node.name == "has" and not isinstance(node.args[0], Select):
            raise BoundsError("cel-syntax", "has() takes a field selection, such as has(pr.title)", node.pos)
        if node.name == "matches":
            _check_regex(node.args[-1])
        operands = ([node.target] if node.target is not None else []) + list(node.args)
        visited = [self.visit(op, scope, loops) for op in operands]
        cost = CALL_COST + sum(v.cost for v in visited)
        shapes = [v.shape for v in visited]
        return _function_result(node, shapes, cost)

    def _macro(self, node: Call, scope: dict[str, Shape], loops: int) -> Estimate:
        if len(node.args) != 2 or not isinstance(node.args[0], Ident):
            raise BoundsError("cel-syntax", f"{node.name}() takes a variable and an expression, "
                              f"such as pr.files.{node.name}(f, f.startsWith(\"docs/\"))", node.pos)
        if loops >= MAX_LOOP_NESTING:
            raise _too_complex(f"macros nested more than {MAX_LOOP_NESTING} deep", node.pos)
        source = self.visit(node.target, scope, loops)  # type: ignore[arg-type]
        items = source.shape
        count = items.length
        variable = items.item if items.kind != "map" else ANY_WORST  # a map yields its keys
        body = self.visit(node.args[1], {**scope, node.args[0].name: variable}, loops + 1)
        cost = 1 + source.cost + count * (ITERATION_COST + body.cost)
        if node.name == "map":
            return Estimate(list_of(count, body.shape), cost + count / ALLOC_ITEMS)
        if node.name == "filter":
            return Estimate(list_of(count, items.item), cost + count / ALLOC_ITEMS)
        return Estimate(scalar("bool"), cost)


def string_value(node: Node) -> str | None:
    """The value of a string literal, None for anything else."""
    if not isinstance(node, Literal) or node.kind != "string":
        return None
    return str(literal_value(node))


def literal_value(node: Literal) -> str | bytes:
    """A string or bytes literal decoded as celpy's transpiler decodes it; BoundsError for an escape
    it cannot decode (a code point past U+10FFFF, a byte past 255)."""
    try:
        if node.kind == "bytes":
            return bytes(celbytes(lark.Token("BYTES_LIT", node.text)))
        return str(celstr(lark.Token("STRING_LIT", node.text)))
    except (ValueError, TypeError):
        allowed = "a byte is at most \\377 or \\xff" if node.kind == "bytes" else "a character is at most \\U0010FFFF"
        raise BoundsError("cel-syntax", f"the literal {node.text[:40]} has an escape out of range; {allowed}",
                          node.pos) from None


def _check_regex(node: Node) -> None:
    """A literal pattern must compile with RE2, the engine `matches` runs on."""
    pattern = string_value(node)
    if pattern is None or not isinstance(node, Literal):  # string_value is None for anything else
        return
    try:
        re2.compile(pattern, _QUIET)
    except re2.error as error:
        reason = error.args[0].decode(errors="replace") if error.args and isinstance(error.args[0], bytes) else error
        raise BoundsError("cel-syntax", f"invalid regular expression {node.text} for matches(): {reason}",
                          node.pos) from None


_QUIET = re2.Options()
_QUIET.log_errors = False  # RE2 would print its own copy of the error on stderr


def _compare_cost(a: Shape, b: Shape) -> float:
    """Comparing text scans the shorter one; comparing lists compares their items."""
    if "list" in (a.kind, b.kind) or "map" in (a.kind, b.kind):
        count = min(a.length, b.length) if a.kind == b.kind else max(a.length, b.length)
        return count * (1 / IN_ITEMS + _compare_cost(a.item, b.item))
    return min(a.length, b.length) / SCAN_CHARS


def _function_result(node: Call, shapes: list[Shape], cost: float) -> Estimate:
    name = node.name
    first = shapes[0]
    if name in ("contains", "startsWith", "endsWith"):
        return Estimate(scalar("bool"), cost + first.length / SCAN_CHARS)
    if name == "matches":
        subject, pattern = shapes[0], shapes[1]
        scan = (REGEX_SCAN_FACTOR * subject.length + 64 * pattern.length) / SCAN_CHARS
        return Estimate(scalar("bool"), cost + REGEX_COMPILE + scan)
    if name in ("size", "type", "has") or name.startswith("get"):
        return Estimate(scalar("int" if name != "has" else "bool"), cost)
    if name in ("timestamp", "duration"):
        return Estimate(scalar(name), cost + TIME_PARSE + first.length / SCAN_CHARS)
    if name in ("string", "bytes"):
        length = first.length if first.kind in ("string", "bytes", "any") else 64
        return Estimate(Shape(name, length), cost + length / ALLOC_CHARS)
    return Estimate(scalar(name), cost + first.length / SCAN_CHARS)  # int, uint, double, bool
