"""`load_repo_config`: what a valid file becomes, and what each error says."""

import pytest

from bot.config.admin import load_admin_config
from bot.config.checks import expression_position, path_problem
from bot.config.repo import load_repo_config
from tests.support.config_examples import ROOT

ADMIN = load_admin_config((ROOT / "admin.yaml").read_text(), "admin.yaml")[0]


def errors(text, admin=None, full_name=None):
    config, found = load_repo_config(text, ".reviewer.yaml", admin, full_name)
    assert (config is None) == bool(found)
    return found


def test_a_valid_file_is_typed_with_origins():
    text = ("feedback: minimal\nrules:\n  - id: a\n    file: docs/a.md\n    whenExpr: pr.draft\n"
            "context:\n  - path: c.md\n    description: d\n")
    config, found = load_repo_config(text, ".reviewer.yaml", None)
    assert found == []
    settings = config.settings
    assert settings.scalars == {"feedback": "minimal"}
    [rule] = settings.rules
    assert (rule.id, rule.rule, rule.file, rule.source) == ("a", None, "docs/a.md", "repository")
    assert (rule.origin.pointer, rule.origin.line, rule.origin.column) == ("/rules/0", 3, 5)
    assert (rule.file_origin.pointer, rule.file_origin.line, rule.file_origin.column) == ("/rules/0/file", 4, 11)
    assert (rule.when_expr.text, rule.when_expr.origin.line) == ("pr.draft", 5)
    [entry] = settings.context
    assert (entry.origin.pointer, entry.origin.line, entry.origin.column) == ("/context/0/path", 7, 11)


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n\n"])
def test_an_empty_file_is_valid_and_sets_nothing(text):
    config, found = load_repo_config(text, ".reviewer.yaml", ADMIN, "octo/app")
    assert found == [] and config.settings.scalars == {} and config.settings.rules == ()


def test_bytes_with_a_byte_order_mark_are_read():
    config, found = load_repo_config("\ufeffenabled: false\n".encode(), ".reviewer.yaml", None)
    assert found == [] and config.settings.scalars == {"enabled": False}


def test_unknown_property_suggests_the_intended_name_and_lists_the_allowed_ones():
    [diag] = errors("feeback: minimal\n")
    assert "did you mean `feedback`?" in diag.message and "allowed: agentFiles, approve" in diag.message


def test_exactly_one_of_says_which_case():
    both, neither = errors("rules:\n  - id: a\n    rule: x\n    file: y\n  - id: b\n")
    assert "both are set" in both.message and "none is set" in neither.message
    assert "`rule` or `file`" in both.message


def test_duplicate_id_names_the_first_line():
    [diag] = errors("rules:\n  - id: a\n    rule: x\n  - id: a\n    rule: y\n")
    assert (diag.line, diag.pointer) == (4, "/rules/1/id")
    assert "already used at line 2" in diag.message


def test_admin_id_collision_names_the_admin_rule_file_and_line():
    [instance, account] = errors("rules:\n  - id: no-secrets\n    rule: x\n  - id: octo-style\n    rule: y\n",
                                 ADMIN, "octo/app")
    assert "the instance's rule `defaults.rules[0]` at admin.yaml:9" in instance.message
    assert "the account's rule `accounts.octo.rules[0]` at admin.yaml:19" in account.message


def test_another_accounts_rule_ids_do_not_collide():
    assert errors("rules:\n  - id: octo-style\n    rule: y\n", ADMIN, "other/app") == []


def test_undeclared_provider_lists_the_declared_ones():
    [diag] = errors("models:\n  review: anthropic/claude\n", ADMIN, "octo/app")
    assert "provider `anthropic`" in diag.message and "declared: local, openai" in diag.message


def test_without_the_full_name_the_message_says_accounts_need_it():
    [diag] = errors("models:\n  review: local/llama\n", ADMIN)
    assert "declared: openai" in diag.message and "full name" in diag.message


def test_without_an_admin_file_a_model_is_checked_for_its_pattern_only():
    assert errors("models:\n  review: anywhere/model\n") == []
    assert errors("rules:\n  - id: no-secrets\n    rule: x\n") == []


def test_an_account_login_is_case_insensitive():
    assert errors("models:\n  review: local/llama\n", ADMIN, "OCTO/App") == []


def test_structural_and_relational_errors_are_reported_together():
    found = errors("bogus: 1\nrules:\n  - id: a\n    rule: x\n  - id: a\n", ADMIN)
    assert [d.code for d in found] == ["unknown-property", "exactly-one-of", "duplicate-id"]


def test_an_id_with_a_trailing_newline_is_refused():
    [diag] = errors('rules:\n  - id: "abc\\n"\n    rule: x\n')
    assert diag.code == "pattern"


@pytest.mark.parametrize("path,code", [
    ("/etc/passwd", "path-absolute"), ("..", "path-escapes"), ("../x", "path-escapes"),
    ("a/../../x", "path-escapes"), ("./../x", "path-escapes"), ("a/b/../../../x", "path-escapes"),
    ("..foo", None), ("..foo/bar", None), ("a/../b", None), ("./a", None), ("a/..b/c", None),
])
def test_path_rules(path, code):
    found = path_problem(path)
    assert (found[0] if found else None) == code


SOURCE = ['k: pr.x && @', 'k: "pr.x && @"', "k: 'pr.x && @'", "k: |", "  pr.draft &&", "    @ x", "k: >", "  pr.x @"]


@pytest.mark.parametrize("line,column,value,error,expected", [
    (1, 4, "pr.x && @", (1, 9), (1, 12)),  # plain: the offset is added
    (2, 4, "pr.x && @", (1, 9), (2, 13)),  # double-quoted: after the quote
    (3, 4, "pr.x && @", (1, 9), (3, 13)),  # single-quoted
    (4, 4, "pr.draft &&\n  @ x\n", (2, 3), (6, 5)),  # literal block: its own line and indentation
    (7, 4, "pr.x @\n", (1, 6), (7, 4)),  # folded block: the scalar's position
    (1, 4, "something else", (1, 3), (1, 4)),  # the source does not show the value verbatim
])
def test_expression_positions(line, column, value, error, expected):
    assert expression_position(SOURCE, line, column, value, *error) == expected


def _doc_block(heading):
    text = (ROOT.parents[2] / "docs" / "configuration.md").read_text()
    section = text[text.index(heading):]
    return section[section.index("```yaml\n") + 8:section.index("\n```", section.index("```yaml\n"))] + "\n"


def test_the_documented_examples_are_valid_together():
    admin, found = load_admin_config(_doc_block("## The administrator's file"), "admin.yaml")
    assert found == []
    assert errors(_doc_block("## A complete example"), admin, "octo-org/app") == []
