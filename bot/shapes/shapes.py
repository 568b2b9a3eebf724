"""The declarative shape language: one description of a document, validated and exported.

Each configuration format (the repository file, the admin file, connector resources) is written
once in these shapes. `bot.shapes.validate` checks a loaded value against them and reports
diagnostics with stable codes; `bot.shapes.export` turns the same shapes into the published JSON
Schema, so that the schema and the validator cannot drift apart.

A `Check` is a rule a JSON Schema cannot state (glob syntax, a path escaping the root, CEL that
compiles, …); it runs after the structural rules of its value passed, and is named so that the
schema-agreement test can list what the published schema leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# A check returns None when the value is fine, else (code, message without the field name).
CheckFunc = Callable[[Any], "tuple[str, str] | None"]


@dataclass(frozen=True)
class Check:
    name: str
    func: CheckFunc
    # JSON Schema keywords that state part of the rule (a path's "no leading `/`" as a pattern),
    # exported with the shape; the check is still listed as unexported, since the rest is not.
    schema: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Shape:
    description: str = field(default="", kw_only=True)
    checks: tuple[Check, ...] = field(default=(), kw_only=True)
    # Shapes with a name are exported once under `$defs` and referenced.
    name: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class Str(Shape):
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    pattern_hint: str | None = None  # says in words what the pattern allows
    enum: tuple[str, ...] | None = None
    format: str | None = None  # exported only; the meaning is enforced by `checks`

    def __post_init__(self) -> None:
        if self.pattern is not None:
            # ECMA-262 (JSON Schema's dialect) `$` ends the text; Python's also matches before a
            # final newline, which would let "id\n" through. Anchor a final `$` strictly.
            strict = self.pattern
            if strict.endswith("$") and not strict.endswith("\\$"):
                strict = strict[:-1] + r"\Z"
            object.__setattr__(self, "_regex", re.compile(strict))

    @property
    def regex(self) -> re.Pattern[str]:
        return self._regex  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Int(Shape):
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True)
class Num(Shape):
    minimum: float | None = None
    exclusive_minimum: float | None = None


@dataclass(frozen=True)
class Bool(Shape):
    pass


@dataclass(frozen=True)
class Arr(Shape):
    items: Shape = field(default_factory=lambda: AnyValue())
    min_items: int | None = None
    max_items: int | None = None


@dataclass(frozen=True)
class Obj(Shape):
    """A mapping with known properties; unknown ones are errors unless `values` is given."""

    properties: Mapping[str, Shape] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    exactly_one_of: tuple[tuple[str, ...], ...] = ()
    values: Shape | None = None  # a map: any key, each value of this shape
    keys: Str | None = None  # the shape of a map's keys
    max_properties: int | None = None


@dataclass(frozen=True)
class AnyOf(Shape):
    """A value of one of several types (`force_authn`: string, integer or boolean)."""

    options: tuple[Shape, ...] = ()


@dataclass(frozen=True)
class AnyValue(Shape):
    """Anything (an opaque field, such as a Kubernetes annotation map's free form)."""


TYPE_NAMES: dict[type, str] = {
    Str: "a string", Int: "an integer", Num: "a number", Bool: "a boolean",
    Arr: "a list", Obj: "a mapping",
}


def type_name(shape: Shape) -> str:
    if isinstance(shape, AnyOf):
        return " or ".join(type_name(option) for option in shape.options)
    return TYPE_NAMES.get(type(shape), "a value")
