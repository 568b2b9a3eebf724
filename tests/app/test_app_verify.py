"""Verification end to end (`verify: true` in the admin file), through the real app: signed webhook
→ pipeline → the chat double (the review, then one call a finding, answered as reviewer_verdict)
→ the GitHub double. A finding the verifier refutes, citing the lines it read, is not posted and is
counted in the check run's notes and in /metrics; one it confirms is posted; a verifier that fails
changes nothing."""

from __future__ import annotations

import json

import aiohttp
import pytest

from tests.support.app_support import running_app
from tests.support.chat_double import Reply, failing, findings
from tests.support.review_support import (
    BUG,
    LEAK,
    PRIMARY,
    admin_yaml,
    app_reviews,
    config_pull,
    inline_comments,
    reviewed,
    run_text,
    summary_of,
)

pytestmark = pytest.mark.usefixtures("no_key_in_logs")

QUESTION = "You check one finding"  # the verifier's system message


def verdict(kind: str, reason: str, line: int) -> Reply:
    return Reply(content=json.dumps({"verdict": kind, "reason": reason,
                                     "evidence": [{"path": "src/calc.py", "startLine": line, "endLine": line}]}))


def verifying(chat, where: str = "provider") -> str:
    """The admin file of review_support with `verify: true` on the provider, or in `defaults`."""
    text = admin_yaml(chat)
    if where == "provider":
        return text.replace("    timeout: 5\n", "    timeout: 5\n    verify: true\n")
    return text.replace("defaults:\n", "defaults:\n  verify: true\n")


async def metrics(world) -> str:
    async with aiohttp.ClientSession() as http, http.get(world.url + "/metrics") as response:
        return await response.text()


@pytest.mark.parametrize("where", ["provider", "defaults"])
async def test_a_refuted_finding_is_not_posted_and_is_counted_a_confirmed_one_is(
        tmp_path, github, github_app, app_private_key, chat, where):
    chat.answer(PRIMARY, findings(BUG, LEAK))
    chat.answer_when(PRIMARY, "Returns a secret from the environment.", verdict(
        "refuted", "secret() is the documented way to read the token; nothing is returned to a caller outside.", 9))
    chat.answer_when(PRIMARY, "Division by zero when b is 0.", verdict("confirmed", "b may be 0 on line 6.", 6))
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=verifying(chat, where)) as world:
        pr = config_pull(world, "feedback: standard\n")
        run = await reviewed(world, pr)
        shown = await metrics(world)

    assert [c.body for c in inline_comments(world, pr) if "Returns a secret" in c.body] == []
    assert any("Division by zero when b is 0." in c.body for c in inline_comments(world, pr))
    assert "Returns a secret" not in summary_of(world, pr)
    assert "1 refuted by a second look at the code, not posted" in summary_of(world, pr)
    text = run_text(run)
    assert f"Verification by local/{PRIMARY}: 2 finding(s) checked: 1 confirmed; 1 refuted and not posted" in text
    assert ("### Refuted by a second look, not posted (1)\n\n- `src/calc.py:9` **important** Returns a secret from "
            "the environment. — refuted: secret() is the documented way") in text
    assert "Returns a secret" not in "".join(a["message"] for a in run.annotations)
    assert len(app_reviews(world, pr)) == 1
    assert "reviewer_findings_refuted_total 1" in shown
    assert 'reviewer_findings_verified_total{verdict="confirmed"} 1' in shown
    assert 'reviewer_findings_verified_total{verdict="refuted"} 1' in shown
    asked = [r for r in chat.requests_for(PRIMARY) if QUESTION in r.body["messages"][0]["content"]]
    assert len(asked) == 2 and all(r.body["response_format"]["json_schema"]["name"] == "reviewer_verdict"
                                   for r in asked)


async def test_a_failing_verifier_changes_nothing(tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(BUG, LEAK))
    chat.answer_when(PRIMARY, QUESTION, failing(500, "the verifier is down"))
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=verifying(chat)) as world:
        pr = config_pull(world, "feedback: standard\n")
        run = await reviewed(world, pr)
        shown = await metrics(world)

    posted = [c.body for c in inline_comments(world, pr)]
    assert any("Division by zero when b is 0." in b for b in posted) and any("Returns a secret" in b for b in posted)
    assert run.conclusion == "failure" and run.output["title"].startswith("1 blocking finding(s)")
    assert ("2 not verified, the verifier failed (provider 'local': HTTP 500: the verifier is down): posted as "
            "found") in run_text(run)
    assert "reviewer_findings_refuted_total 0" in shown
    assert 'reviewer_findings_verified_total{verdict="failed"} 2' in shown
