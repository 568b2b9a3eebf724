"""The admin file's `analyzers` section: validated at its line like every key, layered instance → account."""

import json

import jsonschema
import pytest

from bot.analyzers.settings import AnalyzerSettings, analyzer_settings
from bot.config.admin import AdminConfig, load_admin_config
from bot.config.schemas import admin_json_schema

TEXT = """\
analyzers:
  ruff: true
  filter: diff_context
  timeout: 30
accounts:
  Octo:
    analyzers:
      secrets: false
      filter: nofilter
      maxInlinePerTool: 5
"""


def load(text):
    admin, found = load_admin_config(text, "/etc/reviewer/admin.yaml")
    assert (admin is None) == bool(found)
    return admin, found


def test_without_settings_secrets_alone_run_on_added_lines():
    settings = analyzer_settings(AdminConfig.empty(), "octo/app")
    assert settings == AnalyzerSettings() and settings.builtins == ("secrets",)
    assert (settings.filter, settings.max_inline_per_tool, settings.timeout, settings.memory_mib) == (
        "added", 25, 60.0, 1024)


def test_the_account_replaces_the_instance_key_by_key():
    admin, _ = load(TEXT)
    octo = analyzer_settings(admin, "OCTO/app")
    assert octo.builtins == ("ruff",) and octo.filter == "nofilter" and octo.max_inline_per_tool == 5
    assert octo.timeout == 30.0
    other = analyzer_settings(admin, "other/app")
    assert other.builtins == ("secrets", "ruff") and other.filter == "diff_context"
    assert other.max_inline_per_tool == 25


@pytest.mark.parametrize("text, pointer, line, code", [
    ("analyzers:\n  filter: everything\n", "/analyzers/filter", 2, "enum"),
    ("analyzers:\n  ruff: yes\n", "/analyzers/ruff", 2, "type"),
    ("analyzers:\n  semgrep: true\n", "/analyzers/semgrep", 2, "unknown-property"),
    ("analyzers:\n  timeout: 0\n", "/analyzers/timeout", 2, "minimum"),
    ("analyzers:\n  timeout: 601\n", "/analyzers/timeout", 2, "maximum"),
    ("analyzers:\n  memoryMiB: 10\n", "/analyzers/memoryMiB", 2, "minimum"),
    ("analyzers:\n  maxInlinePerTool: -1\n", "/analyzers/maxInlinePerTool", 2, "minimum"),
    ("analyzers: [ruff]\n", "/analyzers", 1, "type"),
    ("accounts:\n  octo:\n    analyzers:\n      shellcheck: 1\n", "/accounts/octo/analyzers/shellcheck", 4, "type"),
    ("analyzers:\n  severity:\n    ruff/I*: nit\n    ruff: minor\n", "/analyzers/severity/ruff", 4, "pattern"),
    ("analyzers:\n  severity:\n    ruff/I*: critical\n", "/analyzers/severity/ruff~1I*", 3, "enum"),
    ("analyzers:\n  severity: [ruff]\n", "/analyzers/severity", 2, "type"),
])
def test_bad_settings_are_errors_at_their_line(text, pointer, line, code):
    [diag] = load(text)[1]
    assert (diag.pointer, diag.line, diag.code) == (pointer, line, code)


def test_the_severity_mapping_is_read_in_the_files_order_and_replaced_whole_by_an_account():
    admin, _ = load("analyzers:\n  severity:\n    RUFF/I*: nit\n    codeql/py/sql-*: blocking\n"
                    "accounts:\n  octo:\n    analyzers:\n      severity: {eslint/no-eval: important}\n")
    rules = analyzer_settings(admin, "other/app").severity
    assert [(r.tool, r.rule, r.severity) for r in rules] == [("ruff", "I*", "nit"), ("codeql", "py/sql-*", "blocking")]
    assert [(r.tool, r.rule) for r in analyzer_settings(admin, "octo/app").severity] == [("eslint", "no-eval")]


def test_the_published_schema_takes_the_section_and_refuses_what_the_validator_refuses():
    schema = admin_json_schema()
    jsonschema.validate(dict(load(TEXT)[0].data), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"analyzers": {"filter": "everything"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"accounts": {"octo": {"analyzers": {"actionlint": "on"}}}}, schema)
    assert json.dumps(schema["$defs"]["analyzers"]["properties"]["filter"]["enum"]) == \
        '["added", "diff_context", "file", "nofilter"]'
