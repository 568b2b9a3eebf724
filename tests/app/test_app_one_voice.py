"""One voice on a pull request (issue #33), end to end: the real app against the GitHub double (its
REST, and its GraphQL review threads) and the chat-completions double, with the built-in ruff on.

One review per head carries the model's and the analyzers' findings; every number the pull
request shows (the check run's title and summary, the approval line, the review's body, the tally)
is the same before and after a push that fixes a finding; the fixed finding's thread is closed by
the app and a discussed one is not; an upload saying what the built-in ruff said posts nothing;
ruff's `error`s withhold no approval; findings outside the diff fail nothing; a review a budget
held is `neutral`; the check run names the review's model calls, tokens and cost.
"""

from __future__ import annotations

import re

import aiohttp

from tests.support.analyzers_support import encode, log, result
from tests.support.app_support import World, running_app, settle
from tests.support.chat_double import findings
from tests.support.github_double.model import person
from tests.support.review_support import (
    PRIMARY,
    admin_yaml,
    app_reviews,
    finding,
    push_reviewed,
    reviewed,
    run_text,
    shown,
    summary_of,
)
from tests.support.server_support import wait_for

TOKEN = "one-voice-admin-token-0123456789abcdef"
BASE = "def add(a, b):\n    return a + b\n"
HEAD = ("import os\n"                      # 1
        "import sys\n"                     # 2  ruff F401: `sys` imported but unused
        "def add(a, b):\n"                 # 3
        "    return a + b\n"               # 4
        "\n"                               # 5
        "def ratio(a, b):\n"               # 6
        "    return a / b\n"               # 7  the model: blocking
        "\n"                               # 8
        "def secret():\n"                  # 9
        "    return os.environ['TOKEN']\n")  # 10 the model: important
BUG = finding(7, "blocking", "bug", "Division by zero when b is 0.")
LEAK = finding(10, "important", "security", "Returns a secret from the environment.")
RUFF_ON = "analyzers:\n  ruff: true\n"
PRICED = "    price: {input: 2.5, output: 10}\n"


def _admin(chat, extra: str = "", price: str = "") -> str:
    text = admin_yaml(chat)
    if price:
        text = text.replace("    timeout: 5\n", "    timeout: 5\n" + price)
    return text + RUFF_ON + extra


def _pull(world: World, config: str = "feedback: detailed\napprove: true\n", head: dict | None = None):
    return world.pull({".reviewer.yaml": config, "src/calc.py": BASE}, head or {"src/calc.py": HEAD})


def _numbers(run, world: World, pr) -> dict[str, str]:
    """Every place the pull request shows a count of what stands at its head."""
    summary = shown(summary_of(world, pr))
    headline = re.search(r"\*\*(\d+) finding\(s\)\*\* at `\w+`: (\d+) blocking, (\d+) important, (\d+) minor",
                         summary)
    approval = re.search(r"not approved: (\d+) blocking, (\d+) important", run.output["summary"])
    tally = re.search(r"so far:\*\* (\d+) findings?: (\d+) resolved.*?, (\d+) dismissed, (\d+) open", summary)
    assert headline and approval and tally, summary
    return {"summary": "{}: {} blocking, {} important, {} minor".format(*headline.groups()),
            "approval": "{} blocking, {} important".format(*approval.groups()),
            "open in the tally": tally.group(4)}


async def test_one_review_one_count_and_the_threads_the_app_closes(tmp_path, github, github_app, app_private_key,
                                                                   chat):
    chat.answer(PRIMARY, findings(BUG, LEAK, usage=(1200, 80)))
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=_admin(chat, price=PRICED),
                           REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = _pull(world)
        run = await reviewed(world, pr)
        [review] = app_reviews(world, pr)  # one review, every source's inline comments in it
        by_line = {c.line: c for c in review.comments if "`ruff`" not in c.body}
        linted = [c for c in review.comments if "`ruff`" in c.body]  # F401, and what else this ruff's defaults say
        assert sorted(by_line) == [7, 10] and any(c.body.startswith("**minor** · bug · `ruff` `F401`") for c in linted)
        assert all(c.body.startswith("**minor**") for c in linted)  # ruff's `error`s: minor at most
        ruff, total = len(linted), 2 + len(linted)
        assert shown(review.body) == (
            f"**Reviewer** at `{pr.head_sha[:7]}`: this review posts {total} findings, {total} of them inline. {total} "
            f"findings stand at this head: 1 blocking, 1 important, {ruff} minor, 0 nit (model 2, ruff {ruff}). The "
            "summary comment has the overview.")
        assert run.conclusion == "failure" and run.output["title"] == "1 blocking finding(s)"
        assert _numbers(run, world, pr) == {"summary": f"{total}: 1 blocking, 1 important, {ruff} minor",
                                            "approval": "1 blocking, 1 important", "open in the tally": str(total)}
        # the cost of the review, at the provider's declared price
        assert "- 1 model call: 1,200 prompt and 80 answer tokens; 0.0038 at the declared prices" in run.output[
            "summary"]

        pr.reply(by_line[10], "Is this not on purpose?", "alice")  # a person speaks in the secret's thread
        chat.answer(PRIMARY, findings())
        fixed = await push_reviewed(world, pr, {"src/calc.py": HEAD.replace("a / b", "a / b if b else 0.0")})
        # the fix changed the division's lines and no one found it again: the app closes its thread
        assert pr.thread_resolved(by_line[7]) and not pr.thread_resolved(by_line[10])
        assert len(app_reviews(world, pr)) == 1  # nothing new to post
        assert fixed.output["title"] == "1 important finding(s), nothing blocking"
        assert _numbers(fixed, world, pr) == {"summary": f"{total - 1}: 0 blocking, 1 important, {ruff} minor",
                                              "approval": "0 blocking, 1 important", "open in the tally": str(total - 1)}
        assert (f"{total} findings: 1 resolved (1 thread closed by the app), 0 dismissed, {total - 1} open"
                in summary_of(world, pr))

        rewritten = HEAD.replace("a / b", "a / b if b else 0.0").replace("os.environ['TOKEN']", "os.environ.get('T')")
        last = await push_reviewed(world, pr, {"src/calc.py": rewritten})
        # the secret's lines changed too, but people spoke in its thread: it stays for them to close
        assert not pr.thread_resolved(by_line[10]) and not any(pr.thread_resolved(c) for c in linted)
        assert (f"{total} findings: 2 resolved (1 thread closed by the app), 0 dismissed, {ruff} open"
                in summary_of(world, pr))
        assert last.output["title"] == "Nothing blocking or important"
    mutations = [c for c in github.graphql_calls if c.operation == "mutation"]
    assert [c.fields for c in mutations] == [("resolveReviewThread",)]  # once, for the fixed finding alone


async def test_an_upload_saying_what_the_built_in_ruff_said_posts_nothing(tmp_path, github, github_app,
                                                                        app_private_key, chat):
    chat.answer(PRIMARY, findings())
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=_admin(chat),
                           REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = _pull(world)
        await reviewed(world, pr)
        [review] = app_reviews(world, pr)[:1]
        assert {(c.path, c.line) for c in review.comments} == {("src/calc.py", 2)}
        assert any("`ruff` `F401`" in c.body for c in review.comments)
        # CI's ruff: another tool name, another message, the same rule at the same line
        ci = log(result("src/calc.py", 2, ruleId="F401", level="error",
                        message={"text": "sys is imported but never used"}), name="Ruff")
        status = await _upload(world, ci, pr.head_sha, pr.number)
        assert status == "complete"
        await settle()
        assert len([r for r in app_reviews(world, pr) if r.comments]) == 1  # nothing posted again


async def _upload(world: World, document: dict, sha: str, number: int) -> str:
    body = {"commit_sha": sha, "ref": f"refs/pull/{number}/head", "sarif": encode(document)}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{world.url}/v1/repos/octo-org/example/code-scanning/sarifs", json=body,
                             headers=headers) as response:
            assert response.status == 202, await response.text()
            url = (await response.json())["url"]

        async def done() -> str | None:
            async with http.get(url, headers=headers) as answer:
                state = (await answer.json())["processing_status"]
            return state if state != "pending" else None
        return await wait_for(done, 20)


async def test_rufs_errors_withhold_no_approval(tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(finding(4, "minor", "docs", "Say what add returns.")))
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=_admin(chat)) as world:
        pr = _pull(world)
        run = await reviewed(world, pr)
    assert run.conclusion == "success" and run.output["title"] == "Nothing blocking or important"
    assert [r.state for r in app_reviews(world, pr)] == ["COMMENTED", "APPROVED"]
    assert any("`ruff` `F401`" in c.body for c in app_reviews(world, pr)[0].comments)


async def test_findings_outside_the_diff_fail_nothing(tmp_path, github, github_app, app_private_key, chat):
    """A pull request that changes only its configuration: the model's findings about other files
    are listed, and decide neither the check run nor the approval."""
    chat.answer(PRIMARY, findings(finding(1, "blocking", "bug", "add() overflows.", path="src/calc.py")))
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=_admin(chat)) as world:
        config = "feedback: detailed\napprove: true\n"
        pr = world.pull({".reviewer.yaml": config, "src/calc.py": BASE},
                        {".reviewer.yaml": config + "# reviewed by the team\n"})
        run = await reviewed(world, pr)
    assert run.conclusion == "success" and run.output["title"] == "Nothing blocking or important; 1 outside the diff"
    assert "add() overflows." in summary_of(world, pr) and "1 outside the diff, which decide nothing" in summary_of(
        world, pr)
    assert [r.state for r in app_reviews(world, pr)] == ["APPROVED"]  # nothing inline; nothing on the diff blocks


async def test_a_review_a_budget_held_is_neutral_with_the_analyzers_findings(tmp_path, github, github_app,
                                                                             app_private_key, chat):
    admin = _admin(chat, "budgets:\n  reviewsPerDay: 0\n")
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        pr = _pull(world)
        run = await reviewed(world, pr)
    assert chat.requests_for(PRIMARY) == []  # no model was asked
    assert run.conclusion == "neutral"
    assert run.output["title"].startswith("Not reviewed: the account's budget of 0 reviews a day is spent; ")
    [review] = app_reviews(world, pr)
    # ruff's findings still posted, in the one review
    assert {c.line for c in review.comments} == {2} and any("`ruff` `F401`" in c.body for c in review.comments)
    assert "No model reviewed" in summary_of(world, pr) and "the account's budget `reviewsPerDay` is spent" in run_text(
        run)


async def test_a_discussion_keeps_its_thread_whoever_fixed_its_code(tmp_path, github, github_app, app_private_key,
                                                                    chat):
    """The app never closes a thread a person spoke in, even when the author of the reply is the
    one who fixed it: the thread's people close it."""
    chat.answer(PRIMARY, findings(BUG))
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=_admin(chat)) as world:
        pr = _pull(world)
        await reviewed(world, pr)
        [root] = [c for c in app_reviews(world, pr)[0].comments if c.line == 7]
        pr.reply(root, "Fixed in the next push.", person("bob"))
        chat.answer(PRIMARY, findings())
        await push_reviewed(world, pr, {"src/calc.py": HEAD.replace("a / b", "a / b if b else 0.0")})
    assert not pr.thread_resolved(root)
    assert [c for c in github.graphql_calls if c.operation == "mutation"] == []
