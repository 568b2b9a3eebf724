"""The bounded YAML loader: values, positions, and every load-level error with its place."""

import math

import pytest

from bot.documents.yamldoc import MAX_BYTES, MAX_DEPTH, MAX_INT_DIGITS, load_yaml, load_yaml_stream


def codes(problems):
    return [(p.code, p.line, p.column, p.pointer) for p in problems]


def test_values_and_positions_are_kept():
    doc, problems = load_yaml("rules:\n  - id: x\n    rule: 'y'\nn: 017\nb: yes\nt: True\n")
    assert problems == []
    assert doc.value == {"rules": [{"id": "x", "rule": "y"}], "n": 17, "b": "yes", "t": True}
    assert doc.locate("/rules/0/rule") == (3, 11)
    assert doc.locate("/rules/0/rule", key=True) == (3, 5)
    assert doc.locate("/rules/0") == (2, 5)  # a mapping is located at its first key
    assert doc.locate("/rules/0/missing") == (2, 5)  # a missing node: its nearest parent


def test_empty_and_comment_only_files_are_documents_without_value():
    for text in ("", "# nothing here\n\n"):
        doc, problems = load_yaml(text)
        assert problems == [] and doc is not None and doc.value is None


def test_duplicate_key_is_reported_at_the_second_naming_the_first():
    doc, problems = load_yaml("a: 1\nb: 2\na: 3\n")
    assert codes(problems) == [("duplicate-key", 3, 1, "/a")]
    assert "line 1" in problems[0].message
    assert doc.value == {"a": 1, "b": 2}


def test_non_string_keys_are_errors_named_by_the_key_itself():
    doc, problems = load_yaml("rules:\n  123: x\n  true: y\n  ~: z\n  a/b: w\n")
    assert codes(problems) == [("non-string-key", 2, 3, "/rules/123"), ("non-string-key", 3, 3, "/rules/true"),
                               ("non-string-key", 4, 3, "/rules/~0")]
    assert problems[0].message.startswith("`rules[123]`: keys must be strings; got '123'")
    assert doc.value == {"rules": {"a/b": "w"}}


def test_a_collection_key_is_reported_at_the_key_on_its_mapping():
    _, problems = load_yaml("a:\n  ? [x]\n  : 1\n")
    assert codes(problems) == [("non-string-key", 2, 5, "/a")]


def test_syntax_error_has_its_position():
    doc, problems = load_yaml("a: 1\nb: c: d\n")
    assert doc is None and (problems[0].code, problems[0].line, problems[0].column) == ("yaml-syntax", 2, 5)


def test_more_than_one_document_is_an_error_for_single_document_files():
    doc, problems = load_yaml("a: 1\n---\nb: 2\n")
    assert doc is None and codes(problems) == [("multiple-documents", 3, 1, "")]


def test_stream_keeps_document_index_on_problems():
    docs, problems = load_yaml_stream("a: 1\n---\nb: 1\nb: 2\n")
    assert [d.value for d in docs] == [{"a": 1}, {"b": 1}]
    assert problems[0].document == 1 and problems[0].line == 4


def test_files_over_the_size_limit_are_refused_before_parsing():
    doc, problems = load_yaml("a: " + "x" * MAX_BYTES)
    assert doc is None and problems[0].code == "too-large"


def test_alias_bomb_is_refused_quickly():
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=False))
    doc, problems = load_yaml(bomb)
    assert doc.value is None and [p.code for p in problems] == ["alias-limit"]


def test_small_alias_use_is_fine_and_merge_keys_work():
    doc, problems = load_yaml("base: &b {paths: [src/**]}\nr:\n  <<: *b\n  id: x\n")
    assert problems == [] and doc.value["r"] == {"paths": ["src/**"], "id": "x"}


def test_deep_nesting_is_refused_where_the_limit_is_crossed():
    doc, problems = load_yaml("[" * 200 + "]" * 200)
    # the node at depth 65: the 66th `[`, at column 66, inside 65 sequences
    assert doc is None and codes(problems) == [("too-deep", 1, MAX_DEPTH + 2, "/0" * (MAX_DEPTH + 1))]
    doc, problems = load_yaml("rules:\n" + "".join("  " * n + f"k{n}:\n" for n in range(1, 100)))
    # the value of k64 is 65 deep: the mapping whose first key, k65, is on line 66
    assert codes(problems) == [("too-deep", MAX_DEPTH + 2, 2 * MAX_DEPTH + 3,
                                "/rules" + "".join(f"/k{n}" for n in range(1, MAX_DEPTH + 1)))]


def test_nesting_at_the_limit_loads():
    doc, problems = load_yaml("[" * MAX_DEPTH + "x" + "]" * MAX_DEPTH)
    assert problems == [] and doc.value is not None


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "{a: " * 50_000 + "}" * 50_000,
                                  "- " * 100_000 + "x\n", "? " * 100_000 + "x\n"])
def test_nesting_a_hundred_thousand_deep_is_refused_not_a_crash(text):
    # ruamel's C composer recursed once a level: these ended the process with SIGSEGV.
    doc, problems = load_yaml(text)
    assert doc is None and [(p.code, p.line) for p in problems] == [("too-deep", 1)]


def test_aliases_cannot_nest_past_the_limit():
    text = "a: &a " + "[" * 40 + "x" + "]" * 40 + "\nb: " + "[" * 40 + "*a" + "]" * 40 + "\n"
    doc, problems = load_yaml(text)
    # named under the alias's place; positioned in the anchored text, where the nodes were written
    assert [(p.code, p.pointer[:3], p.line) for p in problems] == [("too-deep", "/b/", 1)]


def test_an_alias_inside_its_own_anchor_is_a_cycle():
    doc, problems = load_yaml("a: &x\n  b: [1, *x]\n")
    assert doc is None and codes(problems) == [("alias-limit", 2, 10, "/a/b/1")]


def test_undefined_aliases_and_twice_defined_anchors_are_syntax_errors_with_a_place():
    _, problems = load_yaml("a: 1\nb: *nope\n")
    assert codes(problems) == [("yaml-syntax", 2, 4, "/b")] and "*nope" in problems[0].message
    _, problems = load_yaml("a: &x 1\nb: &x 2\n")
    assert codes(problems) == [("yaml-syntax", 2, 4, "/b")] and "line 1" in problems[0].message


@pytest.mark.parametrize("literal", ["9" * 20_000, "-" + "1" * 5_000, "0x" + "f" * 20_000, "0o" + "7" * 5_000])
def test_integers_of_thousands_of_digits_are_too_large(literal):
    doc, problems = load_yaml(f"rules:\n  - timeout: {literal}\n")
    assert codes(problems) == [("too-large", 2, 14, "/rules/0/timeout")]
    assert f"the limit is {MAX_INT_DIGITS}" in problems[0].message
    assert doc.value == {"rules": [{"timeout": None}]}


def test_integers_up_to_the_limit_load():
    doc, problems = load_yaml(f"n: {'9' * MAX_INT_DIGITS}\nh: 0x{'f' * (MAX_INT_DIGITS - 2)}\n")
    assert problems == [] and doc.value["n"] == 10 ** MAX_INT_DIGITS - 1


def test_invalid_utf8_is_a_syntax_error():
    _, problems = load_yaml(b"a: \xff\n")
    assert problems[0].code == "yaml-syntax"


# An explicit tag asks for a type; a value the type cannot hold, or a tag we do not read, is an
# error at the value (`yaml-tag`), never an exception nor a value silently read as something else
# (`!!bool xyz` was false, `!!null xyz` null, `!!float xyz` a ValueError traceback).
@pytest.mark.parametrize(("text", "place", "said"), [
    ("a: !!float xyz\n", (1, 4, "/a"), "!!float cannot hold 'xyz'"),
    ("a: !!float 0x1F\n", (1, 4, "/a"), "!!float cannot hold '0x1F'"),
    ("a: !!int 1.5\n", (1, 4, "/a"), "!!int cannot hold '1.5'"),
    ("a: !!int xyz\n", (1, 4, "/a"), "!!int cannot hold 'xyz'"),
    ("a: !!bool yes\n", (1, 4, "/a"), "!!bool cannot hold 'yes'"),
    ("a: !!bool xyz\n", (1, 4, "/a"), "!!bool cannot hold 'xyz'"),
    ("a: !!null xyz\n", (1, 4, "/a"), "!!null cannot hold 'xyz'"),
    ("a: !!float\n", (1, 4, "/a"), "!!float cannot hold ''"),
    ("a: !!timestamp yesterday\n", (1, 4, "/a"), "!!timestamp cannot hold 'yesterday'"),
    ("a: !!binary aGVsbG8=\n", (1, 4, "/a"), "the tag !!binary is not supported"),
    ("a: !custom x\n", (1, 4, "/a"), "the tag !custom is not supported"),
    ("a: !!python/object:os.system x\n", (1, 4, "/a"), "the tag !!python/object:os.system is not supported"),
    ("a: !!map x\n", (1, 4, "/a"), "!!map cannot hold 'x': write a mapping"),
    ("rules: !foo\n  - id: a\n", (1, 8, "/rules"), "the tag !foo is not supported"),
    ("a: !!python/object:os.system {b: 1}\n", (1, 4, "/a"), "is not supported"),
    ("a: !!seq {b: 1}\n", (1, 4, "/a"), "!!seq cannot hold a mapping"),
    ("a: !!map [1]\n", (1, 4, "/a"), "!!map cannot hold a sequence"),
    ("a: !!str [1]\n", (1, 4, "/a"), "!!str cannot hold a sequence"),
    ("a: !!set {b: null}\n", (1, 4, "/a"), "the tag !!set is not supported"),
    ("a: !!omap [{b: 1}]\n", (1, 4, "/a"), "the tag !!omap is not supported"),
    ("!foo k: 1\n", (1, 1, "/k"), "the tag !foo is not supported"),
    ("!!float k: 1\n", (1, 1, "/k"), "!!float cannot hold 'k'"),
    ("%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n", (3, 4, "/a"), "tag:example.com,2000:x is not supported"),
])
def test_an_explicit_tag_that_cannot_hold_its_value_is_an_error_at_its_place(text, place, said):
    doc, problems = load_yaml(text + "z: 1\n")
    assert codes(problems) == [("yaml-tag", *place)]
    assert said in problems[0].message and problems[0].message.startswith(f"`{place[2][1:]}`")
    assert doc.value["z"] == 1  # the rest of the file is read


@pytest.mark.parametrize(("text", "value"), [
    ("!!float 1", 1.0), ("!!float 1.5", 1.5), ("!!float -.inf", -math.inf), ("!!float 017", 17.0),
    ("!!int 0x1F", 31), ("!!int 1_000", 1000), ("!!int '7'", 7), ("!!bool TRUE", True), ("!!bool false", False),
    ("!!null ~", None), ("!!null", None), ("!!str 12", "12"), ("!!str", ""), ("!!timestamp 2001-12-14", "2001-12-14"),
    ("!!map {b: 1}", {"b": 1}), ("!!seq [1]", [1]), ("!<tag:yaml.org,2002:int> 3", 3), ("!!str true", "true"),
])
def test_an_explicit_tag_that_holds_its_value_loads_it(text, value):
    doc, problems = load_yaml(f"a: {text}\n")
    assert problems == [] and doc.value == {"a": value}


@pytest.mark.parametrize(("text", "place"), [("[", (1, 2)), ("a: 1\nb: [\n", (2, 5)), ('a: "x', (1, 6))])
def test_an_error_at_the_end_of_the_stream_is_placed_on_the_last_line(text, place):
    # libyaml put these on the line after the last one, which no editor or annotation can show.
    _, problems = load_yaml(text)
    assert [(p.code, p.line, p.column) for p in problems] == [("yaml-syntax", *place)]


@pytest.mark.parametrize("brk", ["\r", "\x85", "\u2028", "\u2029"])
def test_positions_count_lines_as_editors_do_whatever_libyaml_breaks_at(brk):
    # libyaml (YAML 1.1) starts a line at each of these; editors and GitHub count `\n` only.
    _, problems = load_yaml(f"a: 'x{brk}y'\nb: [\n")
    assert [(p.code, p.line, p.column) for p in problems] == [("yaml-syntax", 2, 5)]
    doc, problems = load_yaml(f"a: 'x{brk}y'\nb: 1\nb: 2\n")
    assert [(p.code, p.line, p.column) for p in problems] == [("duplicate-key", 3, 1)]
    assert doc.locate("/b") == (2, 4)


def test_windows_line_ends_keep_their_positions():
    doc, problems = load_yaml("a: 1\r\nb: [x,\r\n  1: 2]\r\n")
    assert doc.locate("/b/1") == (3, 3)


@pytest.mark.parametrize(("text", "start", "place"), [("---", (1, 4), None), ("a: 1\nb:", (1, 1), ("/b", (2, 3))),
                                                       ("- x\n- ", (1, 1), ("/1", (2, 2)))])
def test_an_empty_value_at_the_end_is_placed_on_the_last_line(text, start, place):
    # Found by the fuzz layer: libyaml puts it past the end, and `---` alone made `not-a-mapping`
    # point at line 2 of a one-line file.
    doc, problems = load_yaml(text)
    assert problems == [] and doc.start == start
    if place:
        assert doc.locate(place[0]) == place[1]
