"""Abstract values for the static bounds of CEL expressions: what kind a value is and how big it
can get, over the largest `pr` there is (`bot.expr.pr_fields`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from bot.expr import pr_fields as limits


@dataclass(frozen=True, slots=True)
class Shape:
    kind: str  # bool int uint double string bytes null timestamp duration type list map any
    length: int = 0  # most characters of a string or bytes, most items of a list or map
    elem: Shape | None = None  # list items, map values
    fields: Mapping[str, Shape] | None = None  # a record whose fields are known (pr, a label)
    name: str = ""  # how messages call a record ("`pr`", "a label")

    @property
    def item(self) -> Shape:
        return self.elem if self.elem is not None else ANY_SCALAR

    def field(self, name: str) -> Shape | None:
        return self.fields.get(name) if self.fields is not None else None


def scalar(kind: str) -> Shape:
    return Shape(kind)


def string(length: int) -> Shape:
    return Shape("string", length)


def list_of(length: int, elem: Shape) -> Shape:
    return Shape("list", length, elem)


def record(name: str, fields: Mapping[str, Shape]) -> Shape:
    values = list(fields.values())
    return Shape("map", len(fields), join_all(values), MappingProxyType(dict(fields)), name)


ANY_SCALAR = Shape("any")


def join(a: Shape, b: Shape) -> Shape:
    """The smallest shape that holds both: what a conditional or a list literal can yield."""
    if a == b:
        return a
    fields = None
    if a.fields is not None and b.fields is not None:
        names = set(a.fields) | set(b.fields)
        fields = MappingProxyType({n: join(a.fields.get(n, ANY_SCALAR), b.fields.get(n, ANY_SCALAR)) for n in names})
    elem = a.elem if b.elem is None else b.elem if a.elem is None else join(a.elem, b.elem)
    kind = a.kind if a.kind == b.kind else "any"
    return Shape(kind, max(a.length, b.length), elem, fields, a.name if a.name == b.name else "")


def join_all(shapes: list[Shape]) -> Shape | None:
    result: Shape | None = None
    for shape in shapes:
        result = shape if result is None else join(result, shape)
    return result


def _pr_shape() -> Shape:
    kinds = {"int": scalar("int"), "bool": scalar("bool"), "google.protobuf.Timestamp": scalar("timestamp")}
    label = record("a label", {"name": string(limits.MAX_LABEL_NAME), "color": string(limits.MAX_LABEL_COLOR)})
    fields: dict[str, Shape] = {}
    for name, cel_type in limits.PR_FIELDS.items():
        if name == "files":
            fields[name] = list_of(limits.MAX_FILES, string(limits.MAX_PATH))
        elif name == "labels":
            fields[name] = list_of(limits.MAX_LABELS, label)
        elif cel_type == "string":
            fields[name] = string(limits.STRING_LIMITS[name])
        else:
            fields[name] = kinds[cel_type]
    return record("`pr`", fields)


PR_SHAPE = _pr_shape()
# What an unknowable value may be at worst: the longest string or list a `pr` holds.
ANY_WORST = Shape("any", limits.STRING_LIMITS["body"], Shape("any", limits.MAX_PATH))
