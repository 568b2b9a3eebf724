"""Every layering effect of docs/configuration.md, seen where it matters: in the plan made from YAML files."""

from __future__ import annotations

import textwrap

from bot.config.admin import load_admin_config
from bot.config.layering import effective_config
from bot.config.repo import load_repo_config
from bot.plan.planner import make_plan

CHANGED = ["src/app.py", "docs/guide.md", "vendor/lib.js", "build/out.js"]
TREE = {"src/app.py", "docs/guide.md", "STYLE.md", "ARCH.md", "TEAM.md", "AGENTS.md", "tpl/summary.md"}
PR = {"number": 1, "title": "t", "draft": False, "labels": [], "files": CHANGED}


def plan(instance: str = "", account: str = "", repo: str = "", full_name: str = "octo/app", pr=None) -> dict:
    text = ("providers:\n  p: {type: openai, baseUrl: 'https://p.example/v1'}\n"
            "defaults:\n" + (textwrap.indent(instance, "  ") or "  {}\n")
            + "accounts:\n  octo:\n" + (textwrap.indent(account, "    ") or "    {}\n"))
    admin, problems = load_admin_config(text, "admin.yaml")
    assert problems == [], problems
    config, problems = load_repo_config(repo, ".reviewer.yaml", admin, full_name)
    assert problems == [], problems
    effective = effective_config(admin, config, full_name)
    return make_plan(effective, pr or PR, CHANGED, TREE, ".reviewer.yaml").to_json()


def test_enabled_is_anded_and_a_repository_cannot_turn_itself_back_on() -> None:
    assert plan(instance="enabled: false\n", repo="enabled: true\n")["skipReason"] == "disabled"
    assert plan(account="enabled: false\n", repo="enabled: true\n")["skipReason"] == "disabled"
    assert plan(repo="enabled: false\n")["skipReason"] == "disabled"
    assert plan(account="disabledRepositories: ['ap*']\n", repo="enabled: true\n")["skipReason"] == "disabled"
    assert plan(account="disabledRepositories: ['other']\n")["decision"] == "review"


def test_require_suggested_fix_is_ored() -> None:
    assert plan(instance="requireSuggestedFix: true\n", repo="requireSuggestedFix: false\n")["requireSuggestedFix"]
    assert plan(repo="requireSuggestedFix: true\n")["requireSuggestedFix"]
    assert not plan()["requireSuggestedFix"]


def test_filter_exprs_are_anded() -> None:
    assert plan(instance="filterExpr: '!pr.draft'\n", repo="filterExpr: 'pr.number > 5'\n")["skipReason"] == "filtered"
    assert plan(instance="filterExpr: '!pr.draft'\n", repo="filterExpr: 'pr.number == 1'\n")["decision"] == "review"
    drafted = plan(instance="filterExpr: '!pr.draft'\n", repo="filterExpr: 'true'\n", pr={**PR, "draft": True})
    assert drafted["skipReason"] == "filtered" and "the instance configuration" in drafted["notes"][0]


def test_ignore_rules_and_context_are_appended_admin_first() -> None:
    result = plan(
        instance="ignore: ['vendor/**']\nrules:\n  - {id: style, file: STYLE.md}\n"
                 "context:\n  - {path: TEAM.md, description: Who owns what}\n",
        account="rules:\n  - {id: octo-docs, rule: Docs are plain English., paths: ['docs/**']}\n",
        repo="ignore: ['build/**']\nrules:\n  - {id: app, rule: Check the app., paths: ['src/**']}\n"
             "context:\n  - {path: ARCH.md, description: Architecture, paths: ['src/**']}\n")
    assert result["ignored"] == ["vendor/lib.js", "build/out.js"]
    assert [(r["id"], r["source"], r["matchedPaths"]) for r in result["rules"]] == [
        ("style", "instance", ["src/app.py", "docs/guide.md"]),
        ("octo-docs", "account", ["docs/guide.md"]),
        ("app", "repository", ["src/app.py"])]
    assert [(c["path"], c["source"]) for c in result["context"]] == [("TEAM.md", "instance"), ("ARCH.md", "repository")]


def test_single_valued_fields_are_replaced_each_on_its_own() -> None:
    result = plan(
        instance="models: {review: p/big, fallback: p/small}\nfeedback: minimal\napprove: true\nagentFiles: false\n"
                 "comments: {inline: false}\n",
        account="feedback: detailed\n",
        repo="models: {review: p/other}\napprove: false\nagentFiles: true\n"
             "comments: {summaryTemplate: tpl/summary.md}\n")
    assert result["models"] == {"review": "p/other", "fallback": "p/small"}
    assert result["feedback"] == "detailed" and result["approve"] is False
    assert result["comments"] == {"inline": False, "summaryTemplate": "tpl/summary.md", "inlineTemplate": None}
    assert result["agentFiles"] == ["AGENTS.md"]
    assert plan(instance="agentFiles: false\n")["agentFiles"] == []


def test_an_account_applies_only_to_its_own_repositories() -> None:
    account = "rules:\n  - {id: octo-only, rule: Octo things.}\nenabled: false\n"
    assert plan(account=account, full_name="octo/app")["skipReason"] == "disabled"
    other = plan(account=account, full_name="someone/app")
    assert other["decision"] == "review" and other["rules"] == []
