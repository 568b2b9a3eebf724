"""The shape language shared by every configuration format: see `shapes`, `validate`, `export`."""

from bot.shapes.export import to_json_schema, unexported_checks
from bot.shapes.shapes import AnyOf, AnyValue, Arr, Bool, Check, Int, Num, Obj, Shape, Str, type_name
from bot.shapes.validate import Issue, describe, to_diagnostics, validate

__all__ = [
    "AnyOf", "AnyValue", "Arr", "Bool", "Check", "Int", "Issue", "Num", "Obj", "Shape", "Str",
    "describe", "to_diagnostics", "to_json_schema", "type_name", "unexported_checks", "validate",
]
