"""Lookups end to end: a signed webhook → the server's pipeline builds the index from the GitHub
double → the chat double's model asks for a definition and a file's lines before it answers →
the check run names every lookup and what it returned. A hostile model (paths out of the
repository, an unknown tool, bad arguments, a hundred rounds) is answered with errors within
the bounds and the review completes; a provider that refuses tools is asked without them, once
and from then on."""

from __future__ import annotations

import pytest

from tests.support.app_support import running_app
from tests.support.chat_double import ChatDouble, Reply, asks, findings
from tests.support.index_fixtures import CHECKOUT_BASE, CHECKOUT_HEAD, PRICING
from tests.support.review_support import (
    FALLBACK,
    PRIMARY,
    admin_yaml,
    everything_written,
    finding,
    inline_comments,
    reviewed,
    reviewing_app,
    run_text,
)

pytestmark = pytest.mark.usefixtures("no_key_in_logs")  # the shared fixtures of tests/conftest.py

RAISES = finding(4, "blocking", "bug", "apply_discount raises ValueError for a rate above 0.5.",
                 path="src/checkout.py")


def tooled(chat: ChatDouble, tools: str) -> str:
    """The review support's admin file with `tools` on the provider."""
    return admin_yaml(chat).replace("    timeout: 5\n", f"    timeout: 5\n    tools: {tools}\n")


def pull(world):
    return world.pull({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE},
                      {"src/checkout.py": CHECKOUT_HEAD})


async def test_the_model_looks_up_a_definition_and_reads_a_file_before_it_answers(
        tmp_path, github, github_app, app_private_key, chat) -> None:
    chat.answer(PRIMARY, asks(("definition", {"name": "apply_discount", "path": "src/checkout.py", "line": 4}),
                              ("read", {"path": "src/pricing.py", "start": 1, "end": 2})),
                findings(RAISES))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = pull(world)
        run = await reviewed(world, pr)
        first, second = chat.requests_for(PRIMARY)
        assert [t["function"]["name"] for t in first.body["tools"]] == ["definition", "callers", "search", "read"]
        assert first.body["tool_choice"] == "auto"
        assert "You may look things up before you answer" in first.body["messages"][0]["content"]
        definition, read = chat.tool_messages(PRIMARY)
        assert "src/pricing.py:3-6 (default branch) — function `apply_discount`" in definition["content"]
        assert "     5         raise ValueError(rate)" in definition["content"]
        assert "     1 RATE_LIMIT = 3" in read["content"] and "apply_discount" not in read["content"]
        assert second.body["messages"][2]["tool_calls"][0]["function"]["name"] == "definition"

        text = run_text(run)
        assert run.conclusion == "failure", text  # the blocking finding the lookups led to
        assert ("Lookups by local/m1: 2 in 1 round(s)" in text and
                "definition(`apply_discount`, `src/checkout.py`:4) → 1 definition(s): src/pricing.py:3-6" in text)
        assert "read(`src/pricing.py`, 1-2) → lines 1-2 of 6 (default branch)" in text
        assert [c.body for c in inline_comments(world, pr)][0].count("raises ValueError") == 1


HOSTILE = asks(("read", {"path": "../../etc/passwd"}), ("read", {"path": "/etc/passwd"}),
               ("shell", {"command": "cat /etc/passwd"}), ("read", "{not json"),
               ("definition", {"name": "x", "path": "src/./checkout.py"}),
               ("read", {"path": "src/pricing.py", "start": 3}), ("search", {"text": "apply_discount"}),
               ignores_tool_choice=True)
AGAIN = asks(("search", {"text": "RATE_LIMIT"}), ignores_tool_choice=True)


async def test_a_hostile_model_gets_errors_within_the_bounds_and_the_review_completes(
        tmp_path, github, github_app, app_private_key, chat) -> None:
    # A hundred rounds of lookups, regardless of being told to stop: the review model is asked
    # maxRounds + 2 times, then counts as giving no usable answer, and the fallback answers.
    chat.answer(PRIMARY, HOSTILE, *[AGAIN] * 99, findings(RAISES))
    chat.answer(FALLBACK, findings(RAISES))
    admin = tooled(chat, "{maxRounds: 2, maxBytes: 4000}")
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        pr = pull(world)
        run = await reviewed(world, pr)
        text = run_text(run)
        asked = chat.requests_for(PRIMARY)
        assert len(asked) == 4  # 2 rounds, then told twice to answer
        assert [r.body["tool_choice"] for r in asked] == ["auto", "auto", "none", "none"]
        first_round = [m["content"] for m in asked[1].body["messages"] if m["role"] == "tool"]
        assert first_round[:6] == [
            "Error: `path` leaves the repository (`..`): give a path from the repository root",
            "Error: `path` is absolute: give a path from the repository root, such as `src/app.py`",
            "Error: there is no tool `shell`; the tools are definition, callers, search, read",
            "Error: the arguments are not a JSON object",
            "Error: `path` has an empty or `.` part: give a path from the repository root, such as `src/app.py`",
            first_round[5]]
        assert first_round[5].startswith("src/pricing.py (default branch, 6 lines), lines 3-6")
        assert first_round[6] == "Error: at most 6 lookups a round; ask again in the next round"
        spent = [m["content"] for m in asked[3].body["messages"] if m["role"] == "tool"][-1]
        assert spent.startswith("Error: no more lookups: this review's limit (2 round(s)) is reached")
        assert run.conclusion == "failure" and "local/m2" in text  # completed, by the fallback
        assert "asked for lookups again after it was told to answer (2 round(s) of lookups)" in text
        for named in ("Lookups by local/m1: 9 in 2 round(s)",
                      'read(`{"path": "../../etc/passwd"}`) refused: `path` leaves the repository',
                      'read(`{"path": "/etc/passwd"}`) refused: `path` is absolute',
                      'shell(`{"command": "cat /etc/passwd"}`) refused: there is no tool `shell`',
                      "read(`{not json`) refused: the arguments are not a JSON object",
                      'definition(`{"name": "x", "path": "src/./checkout.py"}`) refused: `path` has an empty',
                      "read(`src/pricing.py`, from 3) → lines 3-6 of 6 (default branch)",
                      "search(`apply_discount`) refused: at most 6 lookups a round",
                      "search(`RATE_LIMIT`) → 1 file(s): src/pricing.py",
                      "search(`RATE_LIMIT`) refused: no more lookups: this review's limit (2 round(s)) is reached"):
            assert named in text, text
        everything_sent = "\n".join(str(r.body) for r in chat.requests)
        assert "root:x:0:0" not in everything_sent and "root:x:0:0" not in everything_written(world)


async def test_a_provider_that_refuses_tools_is_asked_without_them_and_not_offered_them_again(
        tmp_path, github, github_app, app_private_key, chat) -> None:
    chat.answer(PRIMARY, Reply(content=findings(RAISES).content, rejects_tools=True))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        run = await reviewed(world, pull(world))
        assert ["tools" in r.body for r in chat.requests_for(PRIMARY)] == [True, False]
        assert run.conclusion == "failure"  # the one-shot answer was used
        assert ("local/m1 refused tools (provider 'local' refused tools: HTTP 400: registry.ollama.ai/library/m1 "
                "does not support tools)") in run_text(run)

        run = await reviewed(world, pull(world))  # the next review: one request, without tools
        assert ["tools" in r.body for r in chat.requests_for(PRIMARY)] == [True, False, False]
        assert "refused tools" not in run_text(run) and "Lookups by" not in run_text(run)


async def test_tools_false_in_the_admin_file_sends_the_one_shot_request(
        tmp_path, github, github_app, app_private_key, chat) -> None:
    chat.answer(PRIMARY, asks(("read", {"path": "src/pricing.py"})), findings(RAISES))
    admin = tooled(chat, "false")
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        run = await reviewed(world, pull(world))
        [request] = chat.requests_for(PRIMARY)
        assert "tools" not in request.body and "look things up" not in request.body["messages"][0]["content"]
        assert run.conclusion == "failure" and "Lookups by" not in run_text(run)
