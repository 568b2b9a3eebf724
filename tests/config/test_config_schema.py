"""The published JSON Schemas: shipped fresh, printed by `reviewer schema`, and agreeing with the
validator on every example, except for the rules a schema cannot state (listed here by name)."""

import json

import jsonschema
import pytest

from bot.commands.cli import main
from bot.config.admin_schema import ADMIN_CONFIG
from bot.config.checks import CHECK_CODES
from bot.config.repo_schema import REPO_CONFIG
from bot.config.schemas import SHIPPED, admin_json_schema, render, repo_json_schema, shipped_path
from bot.documents.yamldoc import load_yaml, load_yaml_stream
from bot.shapes import unexported_checks
from tests.support.config_examples import INVALID, VALID, example

# Rules the published schema cannot state, and so may pass where the validator refuses:
# the named checks of the shapes (some partly exported, as a pattern) ...
PARTLY_EXPORTED = {"relative-path", "secret-reference"}
# ... rules relating a value to others or to the admin file ...
RELATIONAL = {"duplicate-id", "admin-id-collision", "undeclared-provider", "duplicate-key"}
# ... and what YAML loading reports before any schema sees a value.
YAML_LEVEL = {"yaml-syntax", "too-large", "too-deep", "multiple-documents", "duplicate-key", "non-string-key", "alias-limit"}

CHECK_NAME_CODES = {**CHECK_CODES, "secret-reference": ("secret-reference",)}


def test_the_unexported_checks_are_the_listed_ones():
    assert unexported_checks(REPO_CONFIG) == {"relative-path", "glob-syntax", "cel-compiles"}
    assert unexported_checks(ADMIN_CONFIG) == {"relative-path", "glob-syntax", "cel-compiles", "secret-reference"}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_schema_files_are_fresh(name):
    # On failure: python -m bot.config.schemas
    assert shipped_path(name).read_text(encoding="utf-8") == render(SHIPPED[name]())


@pytest.mark.parametrize("make", [repo_json_schema, admin_json_schema])
def test_schemas_are_valid_draft_2020_12(make):
    schema = make()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def _codes_allowed_to_disagree(shape):
    partial, silent = set(), set(RELATIONAL)
    for name in unexported_checks(shape):
        (partial if name in PARTLY_EXPORTED else silent).update(CHECK_NAME_CODES[name])
    return partial, silent


@pytest.mark.parametrize("path", VALID + INVALID, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_schema_and_validator_agree(path):
    ex = example(path)
    shape, schema = (ADMIN_CONFIG, admin_json_schema()) if ex.is_admin else (REPO_CONFIG, repo_json_schema())
    doc, _ = load_yaml(ex.text)
    codes = {d.code for d in ex.validate()}
    if doc is None or codes & (YAML_LEVEL - {"duplicate-key"}):
        pytest.skip("a YAML-level error: no value reaches the schema")
    value = {} if doc.value is None else doc.value  # an empty file is an empty configuration
    schema_valid = jsonschema.Draft202012Validator(schema).is_valid(value)
    partial, silent = _codes_allowed_to_disagree(shape)
    structural = codes - partial - silent
    if structural:
        assert not schema_valid, f"the schema accepts what the validator refuses with {structural}"
    elif not codes & partial:
        assert schema_valid, "the schema refuses what the validator accepts (or refuses only for unexported rules)"


def test_reviewer_schema_prints_the_shipped_schemas(capsys):
    for name in SHIPPED:
        assert main(["schema", name]) == 0
        assert json.loads(capsys.readouterr().out) == json.loads(shipped_path(name).read_text())


def test_reviewer_schema_refuses_an_unknown_name(capsys):
    assert main(["schema", "nope"]) == 2
    err = capsys.readouterr().err
    assert "'nope' is not a schema" in err and "repo-config" in err


@pytest.mark.parametrize("name,func", [("oidc-connector", "oidc_json_schema"), ("saml-connector", "saml_json_schema")])
def test_reviewer_schema_prints_the_connector_schemas(capsys, name, func):
    schemas = pytest.importorskip("bot.connectors.schemas")
    assert main(["schema", name]) == 0
    assert json.loads(capsys.readouterr().out) == getattr(schemas, func)()


def test_reviewer_crds_prints_both_definitions(capsys):
    pytest.importorskip("bot.connectors.crds")
    assert main(["crds"]) == 0
    docs, found = load_yaml_stream(capsys.readouterr().out)
    assert found == [] and [d.value["kind"] for d in docs] == ["CustomResourceDefinition"] * 2
