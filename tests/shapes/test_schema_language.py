"""The shape language: each code at the right pointer, and the exported JSON Schema agreeing."""

import jsonschema
import pytest

from bot.shapes import AnyOf, Arr, Bool, Check, Int, Obj, Str, to_json_schema, unexported_checks, validate

no_x = Check("no-x", lambda v: ("glob-syntax", "has an x") if "x" in v else None)
ITEM = Obj(name="item", properties={"id": Str(pattern=r"^[a-z]+$"), "a": Str(), "b": Str(checks=(no_x,)),
                                    "n": Int(minimum=0), "flag": AnyOf(options=(Bool(), Str(enum=("yes", "no"))))},
           required=("id",), exactly_one_of=(("a", "b"),))
ROOT = Obj(properties={"items": Arr(items=ITEM, min_items=1), "mode": Str(enum=("one", "two")),
                       "labels": Obj(values=Str(max_length=3), keys=Str(pattern=r"^[a-z]+$"))})

CASES = [
    ({"items": [{"id": "a", "a": "x"}], "mode": "one", "labels": {"k": "v"}}, []),
    ({"item": []}, [("unknown-property", "/item")]),
    ({"mode": "three"}, [("enum", "/mode")]),
    ({"items": []}, [("min-items", "/items")]),
    ({"items": [{"a": "x"}]}, [("required", "/items/0")]),
    ({"items": [{"id": "a"}]}, [("exactly-one-of", "/items/0")]),
    ({"items": [{"id": "a", "a": "1", "b": "2"}]}, [("exactly-one-of", "/items/0")]),
    ({"items": [{"id": "A", "a": "x"}]}, [("pattern", "/items/0/id")]),
    ({"items": [{"id": "a", "a": "x", "n": -1}]}, [("minimum", "/items/0/n")]),
    ({"items": [{"id": "a", "a": "x", "n": True}]}, [("type", "/items/0/n")]),
    ({"items": [{"id": "a", "a": "x", "flag": 3}]}, [("type", "/items/0/flag")]),
    ({"items": [{"id": "a", "a": "x", "flag": "maybe"}]}, [("enum", "/items/0/flag")]),
    ({"labels": {"k": "long"}}, [("max-length", "/labels/k")]),
    ({"labels": {"K": "v"}}, [("pattern", "/labels/K")]),
    ({"items": "no"}, [("type", "/items")]),
]


@pytest.mark.parametrize("value,expected", CASES)
def test_codes_and_pointers(value, expected):
    assert [(i.code, i.pointer) for i in validate(ROOT, value)] == expected


@pytest.mark.parametrize("value,expected", CASES)
def test_exported_schema_agrees(value, expected):
    validator = jsonschema.Draft202012Validator(to_json_schema(ROOT))
    assert validator.is_valid(value) == (expected == [])


def test_checks_run_after_structure_and_are_listed_as_unexported():
    assert [(i.code, i.pointer) for i in validate(ROOT, {"items": [{"id": "a", "b": "x"}]})] == [
        ("glob-syntax", "/items/0/b")]
    assert unexported_checks(ROOT) == {"no-x"}


def test_unknown_property_suggests_the_nearest_name():
    [issue] = validate(ROOT, {"mdoe": "one"})
    assert "did you mean `mode`?" in issue.message and issue.at_key
