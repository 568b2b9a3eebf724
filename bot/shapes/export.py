"""Shapes → JSON Schema (draft 2020-12), the schema editors and `jsonschema` users read.

Named shapes go to `$defs` once and are referenced, so the published schema stays readable.
`Check`s are not exported (a schema cannot state them); their names are in `unexported_checks`.
"""

from __future__ import annotations

from typing import Any

from bot.shapes.shapes import AnyOf, AnyValue, Arr, Bool, Int, Num, Obj, Shape, Str

DRAFT = "https://json-schema.org/draft/2020-12/schema"


class _Exporter:
    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}

    def export(self, shape: Shape, *, top: bool = False) -> dict[str, Any]:
        if shape.name and not top:
            if shape.name not in self.defs:
                self.defs[shape.name] = {}  # placeholder first: shapes may be shared deeply
                self.defs[shape.name] = self._body(shape)
            return {"$ref": f"#/$defs/{shape.name}"}
        return self._body(shape)

    def _body(self, shape: Shape) -> dict[str, Any]:
        out: dict[str, Any] = {"description": shape.description} if shape.description else {}
        out.update(scalar_keywords(shape))
        if isinstance(shape, Arr):
            out["items"] = self.export(shape.items)
        if isinstance(shape, Obj):
            self._object(shape, out)
        elif isinstance(shape, AnyOf):
            out["anyOf"] = [self.export(option) for option in shape.options]
        elif not (isinstance(shape, AnyValue) or "type" in out):
            raise TypeError(f"no JSON Schema for {shape!r}")
        for check in shape.checks:
            if check.schema:
                if any(key in out for key in check.schema):
                    out.setdefault("allOf", []).append(dict(check.schema))
                else:
                    out.update(check.schema)
        return out

    def _object(self, shape: Obj, out: dict[str, Any]) -> None:
        out["type"] = "object"
        if shape.properties:
            out["properties"] = {key: self.export(value) for key, value in shape.properties.items()}
        if shape.required:
            out["required"] = list(shape.required)
        if shape.values is not None:
            out["additionalProperties"] = self.export(shape.values)
            if shape.keys is not None:
                out["propertyNames"] = self._body(shape.keys)
        else:
            out["additionalProperties"] = False
        _put(out, "maxProperties", shape.max_properties)
        if shape.exactly_one_of:
            groups = [{"oneOf": [{"required": [name]} for name in group]} for group in shape.exactly_one_of]
            if len(groups) == 1:
                out.update(groups[0])
            else:
                out["allOf"] = groups


def scalar_keywords(shape: Shape) -> dict[str, Any]:
    """`type` and the bounds of a string, number, boolean or list: the keywords that JSON Schema
    2020-12 and a CRD's structural OpenAPI v3 schema write alike."""
    out: dict[str, Any] = {}
    if isinstance(shape, Str):
        out["type"] = "string"
        _put(out, "enum", list(shape.enum) if shape.enum is not None else None)
        _put(out, "minLength", shape.min_length)
        _put(out, "maxLength", shape.max_length)
        _put(out, "pattern", shape.pattern)
        _put(out, "format", shape.format)
    elif isinstance(shape, (Int, Num)):
        out["type"] = "integer" if isinstance(shape, Int) else "number"
        _put(out, "minimum", shape.minimum)
        _put(out, "maximum", shape.maximum if isinstance(shape, Int) else None)
        _put(out, "exclusiveMinimum", shape.exclusive_minimum if isinstance(shape, Num) else None)
    elif isinstance(shape, Bool):
        out["type"] = "boolean"
    elif isinstance(shape, Arr):
        out["type"] = "array"
        _put(out, "minItems", shape.min_items)
        _put(out, "maxItems", shape.max_items)
    return out


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def to_json_schema(shape: Shape, *, schema_id: str | None = None, title: str | None = None) -> dict[str, Any]:
    exporter = _Exporter()
    body = exporter.export(shape, top=True)
    head: dict[str, Any] = {"$schema": DRAFT}
    if schema_id:
        head["$id"] = schema_id
    if title:
        head["title"] = title
    result = {**head, **body}
    if exporter.defs:
        result["$defs"] = exporter.defs
    return result


def unexported_checks(shape: Shape) -> set[str]:
    """Names of every `Check` reachable from `shape`: the rules the JSON Schema leaves out."""
    seen: set[int] = set()
    names: set[str] = set()

    def walk(node: Shape) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        names.update(check.name for check in node.checks)
        children: list[Shape] = []
        if isinstance(node, Arr):
            children.append(node.items)
        elif isinstance(node, Obj):
            children.extend(node.properties.values())
            children.extend(s for s in (node.values, node.keys) if s is not None)
        elif isinstance(node, AnyOf):
            children.extend(node.options)
        for child in children:
            walk(child)

    walk(shape)
    return names
