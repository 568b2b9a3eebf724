"""Analyzers beside a model (issue #23), end to end: the model's prompt lists the analyzer findings
on the diff, a model finding saying the same at the same line is posted once (by the analyzer), and
a blocking analyzer finding uploaded after the app approved dismisses that approval.

The SARIF here is written for the test in the shape every tool shares (tests/support/analyzers_support.py);
the real tools' files are round-tripped in tests/app/test_app_analyzers.py.
"""

from __future__ import annotations

import aiohttp

from tests.support.analyzers_support import log, result
from tests.support.app_support import World
from tests.support.chat_double import findings
from tests.support.review_support import (
    BUG,
    CLEAN,
    LEAK,
    PRIMARY,
    app_reviews,
    config_pull,
    finding,
    reviewed,
    reviewing_app,
)
from tests.support.server_support import wait_for

TOKEN = "analyses-admin-token-for-tests-0123456789abcdef"


async def _upload(world: World, document: dict, sha: str) -> str:
    from tests.support.analyzers_support import encode

    body = {"commit_sha": sha, "ref": "refs/heads/feature", "sarif": encode(document)}
    async with aiohttp.ClientSession() as http, http.post(
            f"{world.url}/v1/repos/octo-org/example/code-scanning/sarifs", json=body,
            headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        assert response.status == 202, await response.text()
        return (await response.json())["id"]


async def _complete(world: World, upload_id: str) -> None:
    async def done() -> bool:
        async with aiohttp.ClientSession() as http, http.get(
                f"{world.url}/v1/repos/octo-org/example/code-scanning/sarifs/{upload_id}",
                headers={"Authorization": f"Bearer {TOKEN}"}) as response:
            return (await response.json())["processing_status"] == "complete"
    await wait_for(done, 20)


ZERO = log(result("src/calc.py", 6, ruleId="zero-division", level="error",
                  message={"text": "Possible division by zero when b is 0"}), name="pylint-ish")
BLOCKER = log(result("src/calc.py", 9, ruleId="env-secret", level="error",
                     message={"text": "A secret read from the environment is returned"}),
              name="scanner", rules=[{"id": "env-secret", "properties": {"security-severity": "9.8",
                                                                         "tags": ["security"]}}])


async def test_the_model_is_told_and_a_finding_both_make_is_posted_once(tmp_path, github, github_app,
                                                                          app_private_key, chat):
    chat.answer(PRIMARY, findings(BUG, LEAK))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat,
                             REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = config_pull(world, "feedback: standard\n")
        await _upload(world, ZERO, pr.head_sha)  # before the pull request is known: taken up when it opens
        run = await reviewed(world, pr)
    prompt = "\n".join(str(m.get("content")) for m in chat.requests_for(PRIMARY)[0].body["messages"])
    assert "Findings analyzers already reported on this diff" in prompt
    assert "src/calc.py:6-6 [important] Possible division by zero when b is 0 (pylint-ish zero-division)" in prompt
    on_six = [(r.body, c.body) for r in app_reviews(world, pr) for c in r.comments if c.line == 6]
    assert len(on_six) == 1, on_six  # the model's "Division by zero when b is 0." is not posted again
    assert "`pylint-ish` `zero-division`" in on_six[0][1]
    on_nine = [c for r in app_reviews(world, pr) for c in r.comments if c.line == 9]
    assert len(on_nine) == 1 and "Returns a secret from the environment." in on_nine[0].body
    assert any(a["start_line"] == 6 and "(pylint-ish zero-division)" in a["message"] for a in run.annotations)
    assert "1 model finding(s) said what an analyzer said at the same lines" in (run.output.get("text") or "") + \
        run.output["summary"]


async def test_a_blocking_analyzer_finding_dismisses_the_apps_approval(tmp_path, github, github_app,
                                                                       app_private_key, chat):
    chat.answer(PRIMARY, findings(CLEAN))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat,
                             REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = config_pull(world, "approve: true\n")
        first = await reviewed(world, pr)
        assert first.conclusion == "success"
        approval = next(r for r in app_reviews(world, pr) if r.state == "APPROVED")
        await _complete(world, await _upload(world, BLOCKER, pr.head_sha))

        async def dismissed() -> bool:
            return approval.state == "DISMISSED"
        await wait_for(dismissed, 20)
    assert approval.dismissal_message.startswith("Reviewer found 1 blocking and 0 important finding(s)")
    blocking = [c for r in app_reviews(world, pr) for c in r.comments if c.line == 9]
    assert len(blocking) == 1 and blocking[0].body.startswith("**blocking** · security · `scanner` `env-secret`")


AWS_KEY = "AKIA" + "Q3EGRT5JXMPLVW4Z"  # split: this file must not hold the key whole for scanners
SETTINGS = f"import os\n\nAWS_ACCESS_KEY_ID = \"{AWS_KEY}\"\nREGION = os.environ['REGION']\n"
# a ruff-like fix on the key's line (it appends a noqa comment): as a suggestion, the whole line quoted
NOQA = log(result("config/settings.py", 3, ruleId="E501", message={"text": "Line too long"},
                  fixes=[{"description": {"text": "add noqa"}, "artifactChanges": [{
                      "artifactLocation": {"uri": "config/settings.py"},
                      "replacements": [{"deletedRegion": {"startLine": 3, "startColumn": 38, "endLine": 3,
                                                          "endColumn": 38},
                                        "insertedContent": {"text": "  # noqa"}}]}]}]), name="ruff")
QUOTED = finding(3, "minor", "maintainability", "Prefer reading configuration through one settings loader.",
                 path="config/settings.py",
                 fix=f"AWS_ACCESS_KEY_ID = os.environ.get('AWS_ACCESS_KEY_ID', \"{AWS_KEY}\")")


async def test_a_line_holding_a_secret_gets_no_suggestion_and_no_stored_code_from_any_source(
        tmp_path, github, github_app, app_private_key, chat):
    """detect-secrets flags line 3; an uploaded ruff fix and the model's suggestion on that line
    would each quote the whole line. Neither is suggested, and nothing kept of any finding (the
    ledger's code, the followed findings) holds the key."""
    chat.answer(PRIMARY, findings(QUOTED))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat,
                             REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = config_pull(world, "feedback: detailed\n", head={"config/settings.py": SETTINGS})
        await _upload(world, NOQA, pr.head_sha)
        await reviewed(world, pr)
        comments = [c for r in app_reviews(world, pr) for c in r.comments]
        on_three = [c.body for c in comments if c.path == "config/settings.py" and c.line == 3]
        assert any("`detect-secrets`" in body for body in on_three), on_three
        assert any("`ruff` `E501`" in body for body in on_three) and any("settings loader" in b for b in on_three), on_three
        shown = [*(r.body for r in pr.reviews), *(c.body for c in comments), *(c.body for c in pr.comments)]
        assert all(AWS_KEY not in text and "```suggestion" not in text for text in shown), shown
    for stored in tmp_path.glob("reviewer.db*"):
        assert AWS_KEY.encode() not in stored.read_bytes(), stored.name
