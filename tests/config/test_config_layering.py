"""`effective_config`: instance → account → repository, field by field, with `sources`."""

import textwrap

import pytest

from bot.config.admin import load_admin_config
from bot.config.layering import effective_config
from bot.config.repo import load_repo_config

PROVIDERS = "providers:\n  p: {type: openai, baseUrl: 'https://p.example/v1'}\n"


def build(instance="", account="", repo=None, full_name="octo/app", disabled=""):
    account_body = textwrap.indent(account, "    ") if account else ""
    if disabled:
        account_body += f"    disabledRepositories: [{disabled}]\n"
    text = (PROVIDERS + "defaults:\n" + (textwrap.indent(instance, "  ") if instance else "  {}\n")
            + "accounts:\n  octo:\n" + (account_body or "    {}\n"))
    admin, found = load_admin_config(text, "admin.yaml")
    assert found == [], found
    config = None
    if repo is not None:
        config, found = load_repo_config(repo, ".reviewer.yaml", admin, full_name)
        assert found == [], found
    return effective_config(admin, config, full_name)


def test_defaults_when_no_layer_sets_anything():
    for effective in (build(repo=""), effective_config(None, None, None)):
        assert effective.enabled is True and effective.disabled_by is None
        assert effective.feedback == "standard" and effective.comments.inline is True
        assert effective.require_suggested_fix is False and effective.approve is False
        assert effective.agent_files is True
        assert (effective.models.review, effective.models.fallback) == (None, None)
        assert effective.filter_exprs == () and effective.rules == () and effective.ignore == ()
        assert set(effective.sources.values()) <= {"default", "instance"}
        assert effective.sources["enabled"] == "default" and effective.sources["rules"] == "default"


@pytest.mark.parametrize("instance,account,repo,enabled,source", [
    ("enabled: false\n", "", "enabled: true\n", False, "instance"),
    ("", "enabled: false\n", "enabled: true\n", False, "account"),
    ("enabled: true\n", "enabled: true\n", "enabled: false\n", False, "repository"),
    ("enabled: false\n", "enabled: false\n", "enabled: false\n", False, "instance"),
    ("enabled: true\n", "", "", True, "instance"),
    ("", "", "enabled: true\n", True, "repository"),
])
def test_enabled_is_anded(instance, account, repo, enabled, source):
    effective = build(instance, account, repo)
    assert (effective.enabled, effective.sources["enabled"]) == (enabled, source)
    assert (effective.disabled_by is None) == enabled


def test_disabled_by_names_the_layer_and_place():
    effective = build("enabled: false\n", repo="enabled: true\n")
    assert effective.disabled_by == "the instance configuration sets `enabled: false` (admin.yaml:4)"
    effective = build(repo="rules: []\nenabled: false\n")
    assert effective.disabled_by == "the repository's configuration sets `enabled: false` (.reviewer.yaml:2)"


def test_disabled_repositories_turn_a_matching_repository_off():
    effective = build(repo="enabled: true\n", full_name="Octo/Legacy-API", disabled="'legacy-*'")
    assert effective.enabled is False and effective.sources["enabled"] == "account"
    assert "disabledRepositories` matches `legacy-*` (admin.yaml:7)" in effective.disabled_by
    assert build(repo="", full_name="octo/app", disabled="'legacy-*'").enabled is True
    assert build(repo="", full_name="other/legacy-x", disabled="'legacy-*'").enabled is True


def test_an_instance_switch_comes_before_the_accounts_list():
    effective = build("enabled: false\n", repo="", full_name="octo/legacy", disabled="legacy")
    assert effective.sources["enabled"] == "instance"


@pytest.mark.parametrize("instance,account,repo,value,source", [
    ("requireSuggestedFix: true\n", "", "requireSuggestedFix: false\n", True, "instance"),
    ("requireSuggestedFix: false\n", "", "requireSuggestedFix: true\n", True, "repository"),
    ("", "requireSuggestedFix: true\n", "requireSuggestedFix: false\n", True, "account"),
    ("requireSuggestedFix: false\n", "requireSuggestedFix: false\n", "", False, "account"),
])
def test_require_suggested_fix_is_ored(instance, account, repo, value, source):
    effective = build(instance, account, repo)
    assert (effective.require_suggested_fix, effective.sources["requireSuggestedFix"]) == (value, source)


def test_filter_expressions_are_anded_in_layer_order():
    effective = build("filterExpr: '!pr.draft'\n", "filterExpr: pr.number > 0\n", "filterExpr: pr.open\n")
    assert [(e.text, e.source) for e in effective.filter_exprs] == [
        ("!pr.draft", "instance"), ("pr.number > 0", "account"), ("pr.open", "repository")]
    assert effective.sources["filterExpr"] == "instance+account+repository"
    assert effective.filter_exprs[2].origin.file == ".reviewer.yaml"


def test_lists_are_appended_admin_first():
    instance = "ignore: ['**/*.lock']\nrules:\n  - {id: i, rule: x}\ncontext:\n  - {path: a.md, description: a}\n"
    repo = "ignore: [dist/**]\nrules:\n  - {id: r, file: r.md, paths: ['src/**']}\ncontext:\n  - {path: c.md, description: c}\n"
    effective = build(instance, "rules:\n  - {id: a, rule: y}\n", repo)
    assert [(g.pattern, g.source) for g in effective.ignore] == [("**/*.lock", "instance"), ("dist/**", "repository")]
    assert [(r.id, r.source) for r in effective.rules] == [("i", "instance"), ("a", "account"), ("r", "repository")]
    assert [(c.path, c.source) for c in effective.context] == [("a.md", "instance"), ("c.md", "repository")]
    assert effective.rules[2].paths == ("src/**",) and effective.rules[2].file_origin.pointer == "/rules/0/file"
    assert effective.sources["rules"] == "instance+account+repository"
    assert effective.sources["ignore"] == effective.sources["context"] == "instance+repository"


@pytest.mark.parametrize("field,instance,repo,expected", [
    ("approve", "approve: true\n", "approve: false\n", False),
    ("feedback", "feedback: minimal\n", "feedback: detailed\n", "detailed"),
    ("agentFiles", "agentFiles: false\n", "agentFiles: true\n", True),
    ("comments.inline", "comments: {inline: false}\n", "comments: {inline: true}\n", True),
])
def test_single_values_are_replaced_by_the_later_layer(field, instance, repo, expected):
    effective = build(instance, repo=repo)
    attribute = {"approve": "approve", "feedback": "feedback", "agentFiles": "agent_files"}.get(field)
    value = getattr(effective, attribute) if attribute else effective.comments.inline
    assert value == expected and effective.sources[field] == "repository"
    kept = build(instance, repo="")
    assert kept.sources[field] == "instance"


def test_models_and_comments_are_replaced_each_on_its_own():
    instance = ("models: {review: p/big, fallback: p/small}\n"
                "comments: {inline: false, summaryTemplate: t/summary.md, inlineTemplate: t/inline.md}\n")
    effective = build(instance, "models: {fallback: p/medium}\n",
                      "models: {review: p/huge}\ncomments:\n  inlineTemplate: mine.md\n")
    assert (effective.models.review, effective.models.fallback) == ("p/huge", "p/medium")
    assert (effective.sources["models.review"], effective.sources["models.fallback"]) == ("repository", "account")
    comments = effective.comments
    assert (comments.inline, comments.summary_template, comments.inline_template) == (False, "t/summary.md", "mine.md")
    assert comments.summary_template_origin.file == "admin.yaml"
    assert (comments.inline_template_origin.file, comments.inline_template_origin.line) == (".reviewer.yaml", 3)
    assert effective.sources["comments.inline"] == effective.sources["comments.summaryTemplate"] == "instance"
    assert effective.sources["comments.inlineTemplate"] == "repository"


def test_providers_are_the_instances_and_the_accounts():
    account = "providers:\n  q: {type: openai, baseUrl: 'http://127.0.0.1:1/v1'}\n"
    effective = build(account=account, repo="")
    assert sorted(effective.providers) == ["p", "q"] and effective.sources["providers"] == "instance+account"
    assert sorted(build(account=account, repo="", full_name="else/app").providers) == ["p"]


def test_an_absent_repository_file_leaves_the_admin_values():
    effective = build("feedback: minimal\n", "approve: true\n", repo=None)
    assert (effective.feedback, effective.approve) == ("minimal", True)
    assert (effective.sources["feedback"], effective.sources["approve"]) == ("instance", "account")
