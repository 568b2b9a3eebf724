"""Every example under tests/data/config: valid ones load clean, invalid ones give exactly the
errors written in them (line, column, JSON pointer, code), in order."""

import pytest

from tests.support.config_examples import INVALID, VALID, example, outcome


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_example_has_no_error(path):
    found = example(path).validate()
    assert found == []


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_example_reports_each_error_at_its_place(path):
    ex = example(path)
    assert ex.expected, f"{path.name} lists no `# expect:` line"
    assert outcome(ex.validate()) == ex.expected


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_every_message_names_the_field(path):
    for diag in example(path).validate():
        if diag.pointer and diag.code not in ("duplicate-key",):
            field = diag.pointer.rsplit("/", 1)[1].replace("~1", "/")
            assert field in diag.message, diag


def test_every_code_of_the_repository_file_has_an_invalid_example():
    codes = {code for path in INVALID for (_, _, _, code) in example(path).expected}
    assert {"unknown-property", "type", "enum", "pattern", "min-length", "max-length", "required",
            "exactly-one-of", "path-absolute", "path-escapes", "glob-syntax", "duplicate-id",
            "admin-id-collision", "undeclared-provider", "cel-syntax", "cel-unknown-field", "cel-type",
            "cel-too-complex", "not-a-mapping", "duplicate-key", "multiple-documents",
            "yaml-syntax", "secret-reference", "minimum"} <= codes
