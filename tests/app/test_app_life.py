"""A pull request's life end to end (issue #15): webhook → the real server → the GitHub double and
the chat-completions double. A head is reviewed once; a push is reviewed for what changed; a
force-push falls back to a full review; a finding is never posted twice, across events and
restarts; earlier findings that still stand keep the check run failing and block approval.
"""

from __future__ import annotations

import pytest

from tests.support.app_support import running_app, serving
from tests.support.chat_double import ChatDouble, findings
from tests.support.review_support import (
    BUG,
    CALC_HEAD,
    DOCS,
    LEAK,
    PRIMARY,
    admin_yaml,
    app_reviews,
    config_pull,
    finding,
    inline_comments,
    push_reviewed,
    reviewed,
    reviewing_app,
    runs_done,
    summary_comments,
    summary_of,
)

pytestmark = pytest.mark.usefixtures("model_key")  # the shared fixtures of tests/conftest.py

CALC_PUSHED = CALC_HEAD + "\ndef half(a):\n    return ratio(a, 2)\n"  # lines 10-12 added
HALF = finding(12, "important", "bug", "half() hides ratio's division by zero.")


def serving_fresh(tmp_path, github, github_app, private_key, admin: str):
    return running_app(tmp_path, github, github_app, private_key, admin_yaml=admin)


def prompt(chat: ChatDouble, index: int = -1) -> str:
    return chat.requests_for(PRIMARY)[index].body["messages"][1]["content"]


def bodies(world, pr) -> list[str]:
    return [c.body for c in inline_comments(world, pr)]


async def test_a_label_or_a_rerun_of_a_reviewed_head_asks_no_model_and_posts_nothing(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(BUG, LEAK))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "feedback: detailed\n")
        first = await reviewed(world, pr)
        pr.labels.append("ready")
        labeled = await reviewed(world, pr, "labeled")
        rerun_payload = github.payload("check_run", "rerequested", installation=world.installation, pull=pr,
                                       check_run=labeled)
        assert (await world.deliver("check_run", rerun_payload))[0] == 202
        rerun = (await runs_done(world, pr, 3))[-1]

    assert len(chat.requests_for(PRIMARY)) == 1  # the label and the re-run asked nothing
    assert len(app_reviews(world, pr)) == 1 and len(inline_comments(world, pr)) == 2
    assert len(summary_comments(world, pr)) == 1
    for run in (labeled, rerun):  # every event still completes its own run, as the review did
        assert run.conclusion == first.conclusion == "failure"
        assert run.output["title"] == first.output["title"] == "1 blocking finding(s)"
        assert run.annotations == first.annotations
        assert f"Already reviewed: {pr.head_sha[:7]} was already reviewed with this plan" in run.output["summary"]


async def test_a_label_that_changes_the_plan_reviews_again_and_posts_only_what_is_new(
        tmp_path, github, github_app, app_private_key, chat):
    config = ("feedback: detailed\nrules:\n  - id: secrets\n    rule: Never read secrets from the environment.\n"
              "    whenExpr: 'pr.labels.exists(l, l.name == \"security\")'\n")
    chat.answer(PRIMARY, findings(BUG))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, config)
        await reviewed(world, pr)
        chat.answer(PRIMARY, findings({**BUG, "message": "division by zero when b is 0"}, LEAK))  # BUG reworded
        pr.labels.append("security")
        again = await reviewed(world, pr, "labeled")

    assert len(chat.requests_for(PRIMARY)) == 2 and "Rule `secrets`" in prompt(chat)
    assert bodies(world, pr) == [
        "**blocking** · bug: Division by zero when b is 0.\n\n```suggestion\n    return a / b if b else 0.0\n```",
        "**important** · security: Returns a secret from the environment."]
    assert "1 already posted on this pull request, not posted again" in summary_of(world, pr)
    assert again.conclusion == "failure" and again.output["title"] == "1 blocking finding(s)"
    assert "Full review of" in again.output["summary"] and "the plan changed" in again.output["summary"]


async def test_a_push_is_reviewed_for_what_changed_with_the_rest_as_context(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(DOCS))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "feedback: detailed\n", head={"src/calc.py": CALC_HEAD, "README.md": "# Example!\n"})
        first_head = pr.head_sha
        await reviewed(world, pr)
        chat.answer(PRIMARY, findings(DOCS, HALF))  # DOCS again: the same code, the same message
        pushed = await push_reviewed(world, pr, {"src/calc.py": CALC_PUSHED})

    full, incremental = prompt(chat, 0), prompt(chat, 1)
    assert "## Diff (new-file line numbers" in full and "README.md" in full
    changes = incremental.split("## Changes since the last review")[1]
    assert "def half(a):" in changes and "def ratio(a, b):" not in changes and "README.md" not in changes
    context = incremental.split("## The rest of the pull request's diff")[1].split("## Changes since")[0]
    assert "def ratio(a, b):" in context and "README.md" in context  # the rest, labelled as context
    assert bodies(world, pr) == ["**minor** · docs: Document what ratio returns.",
                                 "**important** · bug: half() hides ratio's division by zero."]
    short = pr.head_sha[:7]
    summary = summary_of(world, pr)
    assert f"Reviewed `{short}` incrementally: the changes since the last review (`{first_head[:7]}..{short}`)" in (
        summary)
    assert f"Incremental review: the changes {first_head[:7]}..{short}" in pushed.output["summary"]


async def test_a_force_push_that_drops_the_reviewed_head_gets_a_full_review(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(DOCS))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "feedback: detailed\n")
        await reviewed(world, pr)
        chat.answer(PRIMARY, findings(DOCS, HALF))
        pushed = await push_reviewed(world, pr, {"src/calc.py": CALC_PUSHED}, parent=pr.merge_base)  # rewritten

    assert "## Diff (new-file line numbers" in prompt(chat) and "## The rest of" not in prompt(chat)
    assert "def ratio(a, b):" in prompt(chat)
    assert f"Reviewed `{pr.head_sha[:7]}` (full review)" in summary_of(world, pr)
    assert "no longer in the branch (a force-push)" in pushed.output["summary"]
    assert len(bodies(world, pr)) == 2  # DOCS once, HALF once


async def test_earlier_findings_that_stand_keep_failing_the_run_and_block_approval(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(BUG))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "approve: true\n")
        await reviewed(world, pr)
        chat.answer(PRIMARY, findings())  # the push adds a clean file: nothing new
        pushed = await push_reviewed(world, pr, {"src/extra.py": "X = 1\n"})
        chat.answer(PRIMARY, findings())  # the bug is fixed: its code is gone from the diff
        fixed = await push_reviewed(world, pr, {"src/calc.py": CALC_HEAD.replace("a / b", "a / b if b else 0.0")})

    assert pushed.conclusion == "failure" and pushed.output["title"] == "1 blocking finding(s)"
    assert "not approved: 1 blocking" in pushed.output["summary"]
    assert fixed.conclusion == "success" and fixed.output["title"] == "No findings"
    assert [r.state for r in app_reviews(world, pr)] == ["COMMENTED", "APPROVED"]


async def test_findings_are_never_posted_twice_across_a_restart(tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(BUG, LEAK))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "feedback: detailed\n")
        first_head = pr.head_sha
        await reviewed(world, pr)
    world.repo.commit({"src/calc.py": CALC_PUSHED}, branch=pr.head_ref)
    chat.answer(PRIMARY, findings(LEAK, HALF))
    async with serving(world, app_private_key, admin_yaml=admin_yaml(chat)):  # a new process, the same database
        await reviewed(world, pr, "synchronize", before=first_head)
        world.repo.commit({"src/calc.py": CALC_PUSHED + "\n"}, branch=pr.head_ref, parent=pr.merge_base)
        await reviewed(world, pr, "synchronize", before=first_head)  # force-pushed: a full review

    messages = [b.split(": ", 1)[1].split("\n")[0] for b in bodies(world, pr)]
    assert sorted(messages) == sorted(["Division by zero when b is 0.", "Returns a secret from the environment.",
                                       "half() hides ratio's division by zero."])
    assert len(chat.requests_for(PRIMARY)) == 3


def module(index: int, lines: int = 60) -> str:
    return "".join(f"def f{index}_{n}(x):\n    return x + {n}\n" for n in range(lines // 2))


async def test_a_large_pull_request_is_split_to_fit_the_context_and_nothing_is_left_out_silently(
        tmp_path, github, github_app, app_private_key, chat):
    small = admin_yaml(chat).replace("defaults:", f"    models:\n      {PRIMARY}: {{contextTokens: 8000}}\ndefaults:")
    head = {f"src/m{i}.py": module(i) for i in range(8)}
    head["src/big.py"] = module(99, 1200)  # more than one request can carry
    chat.answer(PRIMARY, findings(finding(3, "important", "bug", "f0_1 adds the wrong constant.", path="src/m0.py")))
    async with serving_fresh(tmp_path, github, github_app, app_private_key, small) as world:
        pr = config_pull(world, "feedback: detailed\n", head=head)
        run = await reviewed(world, pr)

    asked = [r.body["messages"][1]["content"] for r in chat.requests_for(PRIMARY)]
    assert len(asked) >= 3
    for path in head:  # every file went to the model, each in exactly one request
        assert sum(f"### {path} (added)" in text for text in asked) == 1, path
    assert all(len(text.encode()) < (8000 - 4000) * 3 for text in asked)
    assert bodies(world, pr) == ["**important** · bug: f0_1 adds the wrong constant."]  # once, not per request
    summary = summary_of(world, pr)
    assert f"the diff was split into {len(asked)} requests to fit the model's context (8000 tokens)" in summary
    assert "src/big.py: diff cut after" in summary and "src/big.py: diff cut after" in run.output["summary"]


async def test_an_edit_that_changes_the_base_reviews_again(
        tmp_path, github, github_app, app_private_key, chat):
    from tests.support.app_support import BASE_FILES
    chat.answer(PRIMARY, findings(DOCS))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        older = world.repo.commit({**BASE_FILES, ".reviewer.yaml": "feedback: detailed\n",
                                   "src/calc.py": "def add(a, b):\n    return a + b\n", "OLD.md": "old\n"},
                                  replace=True)
        world.repo.branches["maintenance"] = older
        pr = config_pull(world, "feedback: detailed\n")
        await reviewed(world, pr)
        pr.base_ref = "maintenance"
        payload = github.payload("pull_request", "edited", installation=world.installation, pull=pr,
                                 changes={"base": {"ref": {"from": "main"}, "sha": {"from": older}}})
        assert (await world.deliver("pull_request", payload))[0] == 202
        rebased = (await runs_done(world, pr, 2))[-1]

    assert len(chat.requests_for(PRIMARY)) == 2
    assert "the base changed since the last review" in rebased.output["summary"]
    assert bodies(world, pr) == ["**minor** · docs: Document what ratio returns."]  # not twice


async def test_a_push_that_touches_no_file_under_review_asks_no_model(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(LEAK))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "ignore: ['docs/**']\n")
        first_head = pr.head_sha
        await reviewed(world, pr)
        pushed = await push_reviewed(world, pr, {"docs/guide.md": "# Guide, edited\n"})

    assert len(chat.requests_for(PRIMARY)) == 1
    assert (f"Reviewed `{pr.head_sha[:7]}` incrementally: the changes since the last review "
            f"(`{first_head[:7]}..{pr.head_sha[:7]}`): none touch a file under review, so no model was asked"
            ) in summary_of(world, pr)
    assert pushed.output["title"] == "1 important finding(s), nothing blocking"  # the leak still stands
    assert len(inline_comments(world, pr)) == 1
