"""Bounded JSON parsing (bot.documents.jsonbody), shared by the resource API and the webhook dispatcher:
the bounds, and the place named when one is crossed."""

import json

import pytest

from bot.documents.jsonbody import JsonBodyError, count_containers, parse_json
from bot.documents.yamldoc import MAX_DEPTH, MAX_INT_DIGITS


def refusal(text: str | bytes) -> tuple[str, str]:
    with pytest.raises(JsonBodyError) as caught:
        parse_json(text)
    return caught.value.code, caught.value.pointer


def test_values_within_the_bounds_load():
    text = json.dumps({"a": [1, -2.5, "x", None, True, {"b": "9" * 5_000}], "n": int("9" * MAX_INT_DIGITS)})
    assert parse_json(text.encode()) == json.loads(text)
    assert parse_json("[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH) is not None


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 500, 100_000])
def test_the_first_value_past_the_depth_is_named_whatever_the_depth(levels):
    # Past about 1,000 levels json.loads gives up without a place: the pointer is read from the
    # text instead, and must agree with the one found in a parsed value.
    body = '{"a": [0, {"k~/": ' + "[" * levels + "]" * levels + "}]}"
    assert refusal(body) == ("too-deep", "/a/1/k~0~1" + "/0" * (MAX_DEPTH - 2))  # 65 steps


def test_brackets_and_quotes_inside_strings_do_not_count():
    body = '["[[[[", "\\"{{{", ' + "[" * 3_000 + "]" * 3_000 + "]"
    assert refusal(body) == ("too-deep", "/2" + "/0" * MAX_DEPTH)


@pytest.mark.parametrize(("literal", "digits"), [("9" * 20_000, 20_000), ("-" + "1" * (MAX_INT_DIGITS + 1),
                                                                          MAX_INT_DIGITS + 1)])
def test_integers_past_the_digit_limit_are_too_large_at_their_place(literal, digits):
    with pytest.raises(JsonBodyError) as caught:
        parse_json(f'{{"a": [1, {literal}]}}')
    assert (caught.value.code, caught.value.pointer) == ("too-large", "/a/1")
    assert f"{digits} digits" in caught.value.message


@pytest.mark.parametrize("body", [b"{nope", b"\xff\xfe", b"", b"[1,]"])
def test_text_that_is_not_json_is_a_syntax_error_without_a_place(body):
    assert refusal(body) == ("syntax", "")


@pytest.mark.parametrize("body", ['"a string"', "5", "null", "[]", "{}", "1e999"])
def test_a_scalar_or_empty_body_is_a_value(body):
    assert parse_json(body) == json.loads(body)


def test_a_long_integer_alone_is_too_large_at_the_root():
    assert refusal("9" * 5_000) == ("too-large", "")


@pytest.mark.parametrize(("body", "pointer", "where"), [
    (r'{"a": [1, "x\ud800"]}', "/a/1", "`a[1]` holds half"),
    (r'{"a": {"\udc00": 1}}', "/a", "a key of `a` holds half"),
])
def test_half_a_surrogate_pair_is_refused_at_its_place(body, pointer, where):
    # Python keeps `\ud800` as a string no UTF-8 encoder takes: storing a delivery's classification
    # failed far from here, for the whole batch.
    with pytest.raises(JsonBodyError) as caught:
        parse_json(body)
    assert (caught.value.code, caught.value.pointer) == ("syntax", pointer) and where in caught.value.message
    caught.value.message.encode("utf-8")  # the message itself can be printed


def test_escaped_pairs_and_escaped_backslashes_are_text():
    assert parse_json(r'{"a": "\ud83d\ude00", "b": "\\ud800"}') == {"a": "\U0001F600", "b": "\\ud800"}


def test_containers_are_counted_in_the_text_outside_strings():
    assert count_containers(b'{"a": [1, {"b": []}], "c": {}}', 100) == 5
    # brackets inside strings (escaped quotes and backslashes included) are no containers
    text = b'["{[", "a\\\\", "\\"[{", {"k{": [0]}]'
    assert count_containers(text, 3) == 3
    assert count_containers(text, 2) > 2  # counting stops past the cap
    assert count_containers(b"[" + b",".join([b"{}"] * 5000) + b"]", 1000) == 1001
    # a string that never ends hides what follows it, as a parser would refuse it
    assert count_containers(b'[{}, "' + b"{" * 5000, 1000) == 2
