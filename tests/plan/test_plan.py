"""The planner, from EffectiveConfig objects: decisions, skip reasons and their order, rules,
context, agent files, missing referenced files, CEL at plan time, the JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

from bot.config.model import Comments, ContextEntry, EffectiveConfig, Expr, Glob, Models, Origin, Rule
from bot.plan.agent_files import MAX_AGENT_FILES
from bot.plan.model import PlanError
from bot.plan.planner import make_plan
from bot.plan.pr import pr_from_github

REPO = ".reviewer.yaml"
ADMIN = "/etc/reviewer/admin.yaml"
PLAN_KEYS = ["planVersion", "decision", "skipReason", "models", "feedback", "comments", "requireSuggestedFix",
             "approve", "files", "ignored", "rules", "context", "agentFiles", "errors", "notes"]
CHANGED = ["src/app.py", "docs/guide.md", "vendor/lib.js", "src/api/handlers.py", "README.md"]
TREE = {"src/app.py", "docs/guide.md", "README.md", "STYLE.md", "ARCH.md", "AGENTS.md", "src/CLAUDE.md",
        "src/api/AGENTS.md", "src/api/CLAUDE.md", "docs/AGENTS.md", "templates/summary.md", ".reviewer.yaml"}
PR = {"number": 7, "title": "fix: guard", "draft": False, "labels": [{"name": "bug", "color": "d73a4a"}],
      "files": CHANGED, "headRef": "feature/x"}


def at(pointer: str, line: int = 1, column: int = 1, file: str = REPO) -> Origin:
    return Origin(file, pointer, line, column)


def rule(rule_id: str, source: str = "repository", *, text: str | None = "Check it.", file: str | None = None,
         paths: tuple[str, ...] = (), when: str | None = None, line: int = 5) -> Rule:
    where = REPO if source == "repository" else ADMIN
    when_expr = Expr(when, source, at("/rules/0/whenExpr", line + 2, 15, where)) if when else None
    return Rule(rule_id, source, None if file else text, file, paths, when_expr, at("/rules/0", line, 5, where),
                at("/rules/0/file", line + 1, 11, where) if file else None)


def config(**changes) -> EffectiveConfig:
    return EffectiveConfig(**{"models": Models("local/big", "local/small"), **changes})


def plan_json(cfg: EffectiveConfig, *, pr=PR, changed=CHANGED, tree=TREE, errors=()) -> dict:
    return make_plan(cfg, pr, changed, tree, REPO, errors).to_json()


def test_review_plan_names_files_rules_context_agent_files_and_settings() -> None:
    cfg = config(
        ignore=(Glob("vendor/**", "instance", at("/defaults/ignore/0", file=ADMIN)),),
        rules=(rule("style", "instance", file="STYLE.md"),
               rule("api-errors", paths=("src/api/**", "**/handlers.py")),
               rule("docs-tone", paths=("docs/**",), when='pr.labels.exists(l, l.name == "bug")'),
               rule("never", paths=("nothing/**",))),
        context=(ContextEntry("ARCH.md", "How the app is built", ("src/**",), "repository", at("/context/0/path")),),
        feedback="detailed", approve=True, require_suggested_fix=True,
        comments=Comments(False, "templates/summary.md", None, at("/comments/summaryTemplate"), None))
    plan = plan_json(cfg)
    assert list(plan) == PLAN_KEYS
    assert plan["decision"] == "review" and plan["skipReason"] is None
    assert plan["files"] == ["src/app.py", "docs/guide.md", "src/api/handlers.py", "README.md"]
    assert plan["ignored"] == ["vendor/lib.js"]
    assert plan["rules"] == [
        {"id": "style", "source": "instance", "rule": None, "file": "STYLE.md", "matchedPaths": plan["files"]},
        {"id": "api-errors", "source": "repository", "rule": "Check it.", "file": None,
         "matchedPaths": ["src/api/handlers.py"]},
        {"id": "docs-tone", "source": "repository", "rule": "Check it.", "file": None,
         "matchedPaths": ["docs/guide.md"]},
    ]
    assert plan["context"] == [{"path": "ARCH.md", "description": "How the app is built", "source": "repository",
                                "matchedPaths": ["src/app.py", "src/api/handlers.py"]}]
    assert plan["agentFiles"] == ["AGENTS.md", "docs/AGENTS.md", "src/CLAUDE.md", "src/api/AGENTS.md"]
    assert plan["models"] == {"review": "local/big", "fallback": "local/small"}
    assert plan["comments"] == {"inline": False, "summaryTemplate": "templates/summary.md", "inlineTemplate": None}
    assert (plan["feedback"], plan["approve"], plan["requireSuggestedFix"]) == ("detailed", True, True)
    assert plan["errors"] == [] and plan["notes"] == []
    json.dumps(plan)  # plain JSON all the way down


def test_rules_that_do_not_apply_say_why_for_people() -> None:
    cfg = config(rules=(rule("never", paths=("nothing/**",)), rule("off", when="pr.draft")))
    plan = make_plan(cfg, PR, CHANGED, TREE, REPO)
    assert plan.rules == ()
    assert plan.left_out == ("rule `never` (repository): its paths match none of the files to review",
                             "rule `off` (repository): its whenExpr is false")


def test_invalid_config_at_the_merge_base_skips_and_keeps_every_error() -> None:
    error = PlanError(REPO, "merge-base", 3, 7, "/feedback", "enum", "must be one of …")
    plan = plan_json(config(enabled=False, disabled_by="x"), errors=[error])
    assert (plan["decision"], plan["skipReason"]) == ("skip", "invalid-config")
    assert plan["errors"] == [error.to_json()] and plan["rules"] == []


def test_errors_of_the_head_version_do_not_stop_the_review() -> None:
    error = PlanError(REPO, "head", 2, 1, "/rules/0", "required", "`id` is required")
    plan = plan_json(config(), errors=[error])
    assert plan["decision"] == "review" and plan["errors"] == [error.to_json()]


def test_disabled_names_who_turned_it_off() -> None:
    plan = plan_json(config(enabled=False, disabled_by="the account `acme` disables this repository"))
    assert plan["skipReason"] == "disabled"
    assert plan["notes"] == ["Reviews are off: the account `acme` disables this repository."]


def test_filter_false_skips_and_names_the_filter() -> None:
    cfg = config(filter_exprs=(Expr("!pr.draft", "instance", at("/defaults/filterExpr", 4, 15, ADMIN)),
                               Expr('!pr.headRef.startsWith("feature/")', "repository", at("/filterExpr", 2, 13))))
    plan = plan_json(cfg)
    assert plan["skipReason"] == "filtered" and plan["errors"] == []
    assert plan["notes"] == ["The filterExpr of the repository's configuration (.reviewer.yaml:2) is false for "
                             "this pull request: `!pr.headRef.startsWith(\"feature/\")`."]
    assert plan_json(cfg, pr={**PR, "headRef": "main"})["decision"] == "review"


def test_filter_that_fails_skips_as_filtered_with_a_cel_runtime_error() -> None:
    cfg = config(filter_exprs=(Expr("1 / (pr.number - 7) == 0", "repository", at("/filterExpr", 2, 13)),))
    plan = plan_json(cfg)
    assert plan["skipReason"] == "filtered"
    [error] = plan["errors"]
    assert (error["code"], error["source"], error["path"], error["line"], error["pointer"]) == \
        ("cel-runtime", "merge-base", REPO, 2, "/filterExpr")
    assert "divide by zero" in error["message"]


def test_ignored_only_and_nothing_changed() -> None:
    cfg = config(ignore=(Glob("**", "repository", at("/ignore/0")),))
    plan = plan_json(cfg)
    assert (plan["skipReason"], plan["files"], plan["ignored"]) == ("ignored-only", [], CHANGED)
    assert plan["notes"] == ["Every changed path is ignored."]
    empty = plan_json(config(), changed=[])
    assert empty["skipReason"] == "ignored-only" and empty["notes"] == ["The pull request changes no file."]


def test_skip_reasons_follow_their_order() -> None:
    failing_filter = (Expr("1 / 0 == 1", "repository", at("/filterExpr")),)
    everything_ignored = (Glob("**", "repository", at("/ignore/0")),)
    bad = PlanError(REPO, "merge-base", 1, 1, "", "type", "not a mapping")
    both = config(enabled=False, filter_exprs=failing_filter, ignore=everything_ignored)
    assert plan_json(both, errors=[bad])["skipReason"] == "invalid-config"
    disabled = plan_json(both)
    assert disabled["skipReason"] == "disabled" and disabled["errors"] == []  # the filter never ran
    assert plan_json(config(filter_exprs=failing_filter, ignore=everything_ignored))["skipReason"] == "filtered"


def test_when_expr_runtime_error_leaves_the_rule_out_with_an_error() -> None:
    cfg = config(rules=(rule("boom", "account", when="pr.files[4000] == 'x'"),
                        rule("boom-too", when="pr.files[4000] == 'x'"), rule("fine")))
    plan = plan_json(cfg)
    assert [r["id"] for r in plan["rules"]] == ["fine"]
    assert [(e["code"], e["source"], e["path"]) for e in plan["errors"]] == [
        ("cel-runtime", "admin", ADMIN), ("cel-runtime", "merge-base", REPO)]
    assert "whenExpr of rule `boom` failed" in plan["errors"][0]["message"]


def test_when_expr_is_not_evaluated_when_paths_match_nothing() -> None:
    cfg = config(rules=(rule("unreached", paths=("nothing/**",), when="1 / 0 == 1"),))
    assert plan_json(cfg)["errors"] == []


def test_missing_file_in_the_repository_file_is_an_error_at_the_reference() -> None:
    cfg = config(rules=(rule("gone", file="docs/GONE.md", line=9),))
    plan = plan_json(cfg)
    assert plan["skipReason"] == "invalid-config"
    assert plan["errors"] == [{"path": REPO, "source": "merge-base", "line": 10, "column": 11,
                               "pointer": "/rules/0/file", "code": "missing-file",
                               "message": "rule `gone` names `docs/GONE.md`, which does not exist at the merge "
                                          "base; add the file or fix the path"}]


def test_missing_files_of_admin_entries_leave_them_out_with_a_note() -> None:
    cfg = config(rules=(rule("house-style", "instance", file="HOUSE.md"), rule("local")),
                 context=(ContextEntry("GONE.md", "gone", (), "account", at("/accounts/acme/context/0/path", 8, 13,
                                                                            ADMIN)),),
                 comments=Comments(True, "templates/none.md", None, at("/defaults/comments/summaryTemplate", 3, 22,
                                                                        ADMIN), None),
                 sources={"comments.summaryTemplate": "instance"})
    plan = plan_json(cfg)
    assert plan["decision"] == "review" and plan["errors"] == []
    assert [r["id"] for r in plan["rules"]] == ["local"] and plan["context"] == []
    assert plan["comments"]["summaryTemplate"] is None
    assert plan["notes"] == [
        f"The rule `house-style` of the instance configuration ({ADMIN}:6) is left out: `HOUSE.md` does not exist "
        "in this repository at the merge base.",
        f"The context entry of the account configuration ({ADMIN}:8) is left out: `GONE.md` does not exist in "
        "this repository at the merge base.",
        f"The comments.summaryTemplate of the instance configuration ({ADMIN}:3) is left out: `templates/none.md` "
        "does not exist in this repository at the merge base."]


def test_missing_repository_context_and_template_are_errors() -> None:
    cfg = config(context=(ContextEntry("./docs/../GONE.md", "gone", (), "repository", at("/context/0/path", 4, 11)),),
                 comments=Comments(True, None, "tpl/inline.md", None, at("/comments/inlineTemplate", 6, 21)),
                 sources={"comments.inlineTemplate": "repository"})
    plan = plan_json(cfg)
    assert plan["skipReason"] == "invalid-config"
    assert [(e["code"], e["line"], e["pointer"]) for e in plan["errors"]] == [
        ("missing-file", 4, "/context/0/path"), ("missing-file", 6, "/comments/inlineTemplate")]
    present = plan_json(cfg, tree=TREE | {"GONE.md", "tpl/inline.md"})
    assert present["decision"] == "review" and present["context"][0]["path"] == "./docs/../GONE.md"


def test_agent_files_prefer_agents_md_shallowest_first_and_are_capped() -> None:
    assert plan_json(config(agent_files=False))["agentFiles"] == []
    deep = [f"d{i}/x.py" for i in range(MAX_AGENT_FILES + 3)]
    tree = {"CLAUDE.md"} | {f"d{i}/AGENTS.md" for i in range(MAX_AGENT_FILES + 3)}
    plan = plan_json(config(), changed=deep, tree=tree)
    assert plan["agentFiles"][0] == "CLAUDE.md" and len(plan["agentFiles"]) == MAX_AGENT_FILES
    assert plan["notes"] == [f"4 more agent file(s) are left out: at most {MAX_AGENT_FILES} are given, the "
                             "shallowest first."]


def test_duplicate_changed_paths_count_once_in_order() -> None:
    plan = plan_json(config(), changed=["b", "a", "b"], tree=set())
    assert plan["files"] == ["b", "a"]


def test_pr_from_a_webhook_payload() -> None:
    payload = json.loads((Path(__file__).parent.parent / "data/webhooks/pull_request.opened.json").read_text())
    pr = pr_from_github(payload["pull_request"], "opened", ["README.md"])
    source = payload["pull_request"]
    assert pr["number"] == source["number"] and pr["author"] == source["user"]["login"]
    assert pr["event"] == "opened" and pr["files"] == ["README.md"] and pr["body"] == (source["body"] or "")
    assert pr["headSha"] == source["head"]["sha"] and pr["open"] is (source["state"] == "open")
    fork = {**source, "head": {**source["head"], "repo": {"full_name": "someone/fork"}}, "body": None}
    assert pr_from_github(fork, "opened", [])["fork"] is True
    assert pr_from_github(fork, "opened", [])["body"] == ""
    assert pr_from_github(source, "opened", [])["fork"] is (source["head"]["repo"]["full_name"]
                                                            != source["base"]["repo"]["full_name"])
