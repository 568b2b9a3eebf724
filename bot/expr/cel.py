"""CEL over `pr` (`filterExpr`, `whenExpr`): compiled once and checked, evaluated to a boolean.

An expression is checked when a configuration is validated (`check_expression`: parsed, names and
bounds checked), so a syntax error, an unknown field or an expression that could run too long is a
configuration error with a position, never a surprise during a review (`bot.expr.cel_bounds` states
the bounds). Building celpy's runner (transpiling to Python, about as slow as the parse) waits for
the first evaluation (`compile_expression`), which reuses the checked parse: validating a file
whose expressions are never evaluated here (the command line, a cold start) pays only for the
check. Both are kept in LRUs keyed by the text: the same expressions come back on every pull
request.

One celpy runner for the whole process: the compiled (transpiled-to-Python) one, about six times
faster than the interpreter here (≈70 µs against ≈460 µs for a typical expression, ≈35 µs per
item of a comprehension). celpy's parser is a process-wide singleton built for the first runner
class used, so nothing else in the process may create a celpy Environment of another kind; the
compiled runner also evaluates through module globals, so evaluations are serialised by a lock,
and the cyclic garbage collector waits while one runs (see `evaluate_bool`).
"""

from __future__ import annotations

import gc
import logging
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import CELEvalError, TranspilerTree

from bot.expr import cel_bounds, cel_types
from bot.expr.cel_ast import convert, lark_depth
from bot.expr.pr_fields import PR_FIELDS, clamp_pr

__all__ = ["PR_FIELDS", "CelCompileError", "CelRuntimeError", "CheckedExpression", "CompiledExpression", "CelInput",
           "cel_input", "check_expression", "compile_expression", "evaluate_bool", "MAX_SOURCE_LENGTH"]

MAX_SOURCE_LENGTH = 1024
MAX_PARSE_DEPTH = 400  # celpy's tree takes about ten levels per level of nesting
CACHE_SIZE = 1024

# celpy logs every evaluation error at ERROR level; we report them ourselves, with their rule.
logging.getLogger("celpy").setLevel(logging.CRITICAL)

# celpy's Environment sets the process's recursion limit to 2500 (CEL's minimums need it). It is
# set here, at import, as when the Environment was made at import: the limit does not change later,
# at the first expression parsed, under whatever runs then (a Hypothesis test notices).
sys.setrecursionlimit(2500)
_ENVIRONMENT: list[celpy.Environment] = []  # made at the first parse (see _env)
_MAKING = threading.Lock()
_EVALUATING = threading.Lock()
_TRANSPILING = threading.Lock()  # the transpiler writes into the cached, shared parse tree


def _env() -> celpy.Environment:
    """The process's one celpy Environment, made at the first expression parsed, not at import:
    building celpy's parser takes 0.12 CPU-seconds, which a process that never reads an expression
    (most commands, `doctor`, a server refusing its settings) no longer pays."""
    if not _ENVIRONMENT:
        with _MAKING:
            if not _ENVIRONMENT:
                _ENVIRONMENT.append(celpy.Environment(runner_class=celpy.CompiledRunner))
    return _ENVIRONMENT[0]


class CelCompileError(ValueError):
    """code: cel-syntax | cel-unknown-field | cel-type | cel-too-complex; line and column 1-based in the text."""

    def __init__(self, code: str, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(f"{line}:{column}: {message}")
        self.code = code
        self.message = message
        self.line = line
        self.column = column


class CelRuntimeError(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, eq=False)
class CheckedExpression:
    text: str
    cost: float  # the static upper bound of one evaluation, in cel_bounds units
    tree: lark.Tree  # celpy's parse tree, transpiled by compile_expression (which may redo it safely)


@dataclass(frozen=True, eq=False)
class CompiledExpression:
    text: str
    cost: float  # the static upper bound of one evaluation, in cel_bounds units
    runner: celpy.Runner


@dataclass(frozen=True, eq=False)
class CelInput:
    """`pr` converted to CEL values once, for every expression of a plan."""

    pr: dict  # the clamped plain form
    value: celtypes.MapType


@lru_cache(maxsize=CACHE_SIZE)
def check_expression(text: str) -> CheckedExpression:
    """Parse, check names, bounds and types: everything validation needs; CelCompileError says what and where."""
    if len(text) > MAX_SOURCE_LENGTH:
        raise CelCompileError("cel-too-complex", f"longer than {MAX_SOURCE_LENGTH} characters ({len(text)})")
    if not text.strip():
        raise CelCompileError("cel-syntax", "empty expression")
    tree = _parse(text)
    if lark_depth(tree) > MAX_PARSE_DEPTH:
        raise CelCompileError("cel-too-complex", "nested too deeply (parentheses, lists or calls within one another)")
    root = convert(tree)
    try:
        cel_bounds.check_structure(root)
        result = cel_bounds.estimate(root)
    except cel_bounds.BoundsError as error:
        raise CelCompileError(error.code, error.message, error.pos.line, error.pos.column) from None
    try:
        cel_types.check_types(root)
    except cel_types.CelTypeError as error:
        raise CelCompileError("cel-type", error.message, error.pos.line, error.pos.column) from None
    if result.shape.kind not in ("bool", "any"):
        raise CelCompileError("cel-syntax", f"is a condition, so it must yield a boolean; this one yields "
                              f"{'a list' if result.shape.kind == 'list' else result.shape.kind}")
    return CheckedExpression(text, result.cost, tree)


@lru_cache(maxsize=CACHE_SIZE)
def compile_expression(text: str) -> CompiledExpression:
    """The checked expression transpiled to a runner; CelCompileError as check_expression raises it."""
    checked = check_expression(text)
    try:
        with _TRANSPILING:
            runner = _env().program(checked.tree)
    except (RecursionError, SyntaxError, MemoryError):  # Python's own nesting limits, past ours
        raise CelCompileError("cel-too-complex", "nested too deeply to compile") from None
    except (ValueError, TypeError) as error:  # celpy's transpiler refused it
        raise CelCompileError("cel-syntax", f"cannot be compiled: {error}") from None
    return CompiledExpression(text, checked.cost, runner)


def _parse(text: str) -> lark.Tree:
    try:
        tree = _env().compile(text)
    except celpy.CELParseError as error:
        cause = error.__context__
        raise CelCompileError("cel-syntax", _syntax_message(cause, text), error.line or 1, error.column or 1) from None
    if not isinstance(tree, TranspilerTree):  # pragma: no cover - another runner created the parser first
        raise RuntimeError("celpy's parser was created for another runner; see bot.expr.cel")
    return tree


def _syntax_message(cause: BaseException | None, text: str) -> str:
    if isinstance(cause, lark.exceptions.UnexpectedCharacters) and cause.pos_in_stream is not None:
        return f"unexpected character {text[cause.pos_in_stream]!r}"
    if isinstance(cause, lark.exceptions.UnexpectedToken):
        if cause.token.type == "$END":
            return "unexpected end of expression"
        return f"unexpected {cause.token.value!r}"
    return "not a CEL expression"


def cel_input(pr: Mapping) -> CelInput:
    """Convert `pr` once (clamped to the limits the bounds assume) for many evaluations."""
    plain = clamp_pr(dict(pr))
    value = celtypes.MapType({celtypes.StringType(name): _to_cel(PR_FIELDS[name], plain[name]) for name in plain})
    return CelInput(plain, value)


def _to_cel(cel_type: str, value):
    if cel_type == "string":
        return celtypes.StringType(value)
    if cel_type == "int":
        return celtypes.IntType(value)
    if cel_type == "bool":
        return celtypes.BoolType(value)
    if cel_type == "list(string)":
        return celtypes.ListType([celtypes.StringType(v) for v in value])
    if cel_type == "list(map(string, string))":
        return celtypes.ListType([celtypes.MapType({celtypes.StringType(k): celtypes.StringType(v)
                                                    for k, v in item.items()}) for item in value])
    try:
        return celtypes.TimestampType(value)
    except (ValueError, TypeError):
        return celtypes.TimestampType("1970-01-01T00:00:00Z")


def evaluate_bool(compiled: CompiledExpression, pr: Mapping | CelInput) -> bool:
    """The expression's value over `pr`; CelRuntimeError when it fails or is not a boolean."""
    data = pr if isinstance(pr, CelInput) else cel_input(pr)
    with _EVALUATING:
        # celpy allocates an activation per comprehension step; in a process with a large heap
        # (a server) the cyclic collector's passes over it cost more than the evaluation itself
        # (measured: 0.3 s → 1.2 s for the worst accepted expression). What one evaluation
        # allocates is bounded by its cost, so collection waits until it is over.
        collecting = gc.isenabled()
        gc.disable()
        try:
            value = compiled.runner.evaluate({"pr": data.value})
        except CELEvalError as error:
            raise CelRuntimeError(_runtime_message(error)) from None
        except RecursionError:
            raise CelRuntimeError("evaluation nested too deeply") from None
        finally:
            if collecting:
                gc.enable()
    if not isinstance(value, (celtypes.BoolType, bool)):  # has() yields a plain bool
        raise CelRuntimeError(f"yielded {_cel_type_name(value)}, not a boolean")
    return bool(value)


def _runtime_message(error: CELEvalError) -> str:
    """celpy nests (message, exception class, args); keep the words, drop the class reprs."""
    parts: list[str] = []
    args: object = error.args
    while isinstance(args, tuple) and args:
        if isinstance(args[0], str) and args[0] != "evaluation error":
            parts.append(args[0])
        args = args[2] if len(args) > 2 else None
    kept = [part for i, part in enumerate(parts) if not any(later.startswith(part) for later in parts[i + 1:])]
    text = ": ".join(kept) or "evaluation failed"
    text = re.sub(r" <class '[^']*'>", "", text)
    text = re.sub(r"\b(?:String|Int|Uint|Double|Bool|Bytes|List|Map)Type\((.*?)\)", r"\1", text)
    return text[:300]


def _cel_type_name(value: object) -> str:
    for cls, name in ((celtypes.StringType, "a string"), (celtypes.IntType, "an int"), (celtypes.UintType, "a uint"),
                      (celtypes.DoubleType, "a double"), (celtypes.ListType, "a list"), (celtypes.MapType, "a map")):
        if isinstance(value, cls):
            return name
    return "null" if value is None else type(value).__name__
