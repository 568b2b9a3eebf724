"""Checking a plain value against shapes, in one walk, collecting every problem.

Problems are first `Issue`s (pointer, code, message) so that the same walk serves YAML files
(where `to_diagnostics` adds line and column) and API bodies (where the pointer is the place).
Pointer and position semantics are docs/configuration.md's: an unknown property at its own key, a bad value
at the value, a missing property at the object that lacks it.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from bot.documents.diagnostics import Diagnostic
from bot.documents.pointers import human_pointer, join_pointer
from bot.documents.yamldoc import YamlDocument
from bot.shapes.shapes import AnyOf, AnyValue, Arr, Bool, Int, Num, Obj, Shape, Str, type_name


@dataclass(frozen=True, slots=True)
class Issue:
    pointer: str
    code: str
    message: str
    at_key: bool = False


def describe(value: Any) -> str:
    """How a wrong value is shown back: its type, and the value itself when short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"string {shown!r}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _matches_type(shape: Shape, value: Any) -> bool:
    if isinstance(shape, Str):
        return isinstance(value, str)
    if isinstance(shape, Bool):
        return isinstance(value, bool)
    if isinstance(shape, Int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(shape, Num):
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if isinstance(shape, Arr):
        return isinstance(value, list)
    if isinstance(shape, Obj):
        return isinstance(value, dict)
    return True


class _Walker:
    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def add(self, pointer: str, code: str, message: str, at_key: bool = False) -> None:
        self.issues.append(Issue(pointer, code, f"{human_pointer(pointer)}: {message}", at_key))

    def check(self, shape: Shape, value: Any, pointer: str) -> None:
        if isinstance(shape, AnyValue):
            return
        if isinstance(shape, AnyOf):
            return self._any_of(shape, value, pointer)
        if not _matches_type(shape, value):
            self.add(pointer, "type", f"must be {type_name(shape)}; got {describe(value)}")
            return
        before = len(self.issues)
        _CHECKERS[type(shape)](self, shape, value, pointer)
        if len(self.issues) == before:
            for check in shape.checks:
                found = check.func(value)
                if found is not None:
                    self.add(pointer, found[0], found[1])
                    break

    def _any_of(self, shape: AnyOf, value: Any, pointer: str) -> None:
        for option in shape.options:
            if _matches_type(option, value):
                return self.check(option, value, pointer)
        self.add(pointer, "type", f"must be {type_name(shape)}; got {describe(value)}")

    def string(self, shape: Str, value: str, pointer: str) -> None:
        if shape.enum is not None and value not in shape.enum:
            allowed = ", ".join(repr(v) if v == "" else v for v in shape.enum)
            self.add(pointer, "enum", f"must be one of {allowed}; got {describe(value)}")
            return
        if shape.min_length is not None and len(value) < shape.min_length:
            what = "must not be empty" if shape.min_length == 1 else f"must be at least {shape.min_length} characters"
            self.add(pointer, "min-length", what)
            return
        if shape.max_length is not None and len(value) > shape.max_length:
            self.add(pointer, "max-length", f"must be at most {shape.max_length} characters; got {len(value)}")
            return
        if shape.pattern is not None and not shape.regex.search(value):
            hint = f" ({shape.pattern_hint})" if shape.pattern_hint else ""
            self.add(pointer, "pattern", f"must match {shape.pattern}{hint}; got {describe(value)}")

    def number(self, shape: Int | Num, value: int | float, pointer: str) -> None:
        if shape.minimum is not None and value < shape.minimum:
            self.add(pointer, "minimum", f"must be at least {shape.minimum}; got {value}")
        elif isinstance(shape, Int) and shape.maximum is not None and value > shape.maximum:
            self.add(pointer, "maximum", f"must be at most {shape.maximum}; got {value}")
        elif isinstance(shape, Num) and shape.exclusive_minimum is not None and value <= shape.exclusive_minimum:
            self.add(pointer, "minimum", f"must be greater than {shape.exclusive_minimum}; got {value}")

    def array(self, shape: Arr, value: list, pointer: str) -> None:
        if shape.min_items is not None and len(value) < shape.min_items:
            what = "must not be empty" if shape.min_items == 1 else f"must have at least {shape.min_items} items"
            self.add(pointer, "min-items", what)
        if shape.max_items is not None and len(value) > shape.max_items:
            self.add(pointer, "max-items", f"must have at most {shape.max_items} items; got {len(value)}")
            return
        for index, item in enumerate(value):
            self.check(shape.items, item, join_pointer(pointer, index))

    def mapping(self, shape: Obj, value: dict, pointer: str) -> None:
        if shape.max_properties is not None and len(value) > shape.max_properties:
            self.add(pointer, "max-items", f"must have at most {shape.max_properties} entries; got {len(value)}")
            return
        for key, item in value.items():
            child = join_pointer(pointer, key)
            if key in shape.properties:
                self.check(shape.properties[key], item, child)
            elif shape.values is not None:
                if shape.keys is not None:
                    self._map_key(shape.keys, key, child)
                self.check(shape.values, item, child)
            else:
                self.add(child, "unknown-property", _unknown(key, shape), at_key=True)
        for name in shape.required:
            if name not in value:
                self.add(pointer, "required", f"missing required property `{name}`")
        for group in shape.exactly_one_of:
            present = [name for name in group if name in value]
            if len(present) != 1:
                names = " or ".join(f"`{name}`" for name in group)
                state = "none is set" if not present else "both are set" if len(present) == 2 else "several are set"
                self.add(pointer, "exactly-one-of", f"set exactly one of {names}; {state}")

    def _map_key(self, shape: Str, key: str, pointer: str) -> None:
        probe = _Walker()
        probe.string(shape, key, pointer)
        for check in () if probe.issues else shape.checks:
            found = check.func(key)
            if found is not None:
                probe.add(pointer, found[0], found[1])
                break
        for issue in probe.issues:
            message = issue.message.replace(": must", ": the key must", 1)
            self.issues.append(Issue(issue.pointer, issue.code, message, at_key=True))


def _unknown(key: str, shape: Obj) -> str:
    known = sorted(shape.properties)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"; did you mean `{close[0]}`?" if close else ""
    allowed = ", ".join(known) if known else "none"
    return f"unknown property `{key}`{hint} (allowed: {allowed})"


_CHECKERS: dict[type, Callable[[_Walker, Any, Any, str], None]] = {
    Str: _Walker.string, Int: _Walker.number, Num: _Walker.number, Bool: lambda *_: None,
    Arr: _Walker.array, Obj: _Walker.mapping,
}


def validate(shape: Shape, value: Any, pointer: str = "") -> list[Issue]:
    walker = _Walker()
    walker.check(shape, value, pointer)
    return walker.issues


def to_diagnostics(issues: Iterable[Issue], doc: YamlDocument) -> list[Diagnostic]:
    out = []
    for issue in issues:
        line, column = doc.locate(issue.pointer, key=issue.at_key)
        out.append(Diagnostic(line, column, issue.pointer, issue.code, issue.message))
    return out
