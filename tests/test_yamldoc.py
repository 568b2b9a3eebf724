"""The bounded YAML loader: values, positions, and every load-level error with its place."""

from bot.yamldoc import MAX_BYTES, load_yaml, load_yaml_stream


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


def test_non_string_keys_are_errors():
    _, problems = load_yaml("rules:\n  123: x\n")
    assert codes(problems) == [("non-string-key", 2, 3, "/rules")]


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


def test_deep_nesting_is_refused():
    doc, problems = load_yaml("[" * 200 + "]" * 200)
    assert [p.code for p in problems] == ["too-large"]


def test_unsupported_tag_and_invalid_utf8():
    _, problems = load_yaml("a: !custom x\n")
    assert codes(problems) == [("yaml-syntax", 1, 4, "/a")]
    _, problems = load_yaml(b"a: \xff\n")
    assert problems[0].code == "yaml-syntax"
