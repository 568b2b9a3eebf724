"""`reviewer_findings` on /metrics counts every finding posted, the model's and the analyzers' alike
(docs/operations.md "Metrics"): a review posting a model finding and an uploaded analyzer's, then
an upload's own job posting one more after the review, are all counted."""

from __future__ import annotations

import re

import aiohttp

from tests.support.analyzers_support import encode, log, result
from tests.support.app_support import World
from tests.support.chat_double import findings
from tests.support.review_support import BUG, PRIMARY, app_reviews, config_pull, reviewed, reviewing_app
from tests.support.server_support import wait_for

TOKEN = "findings-metric-admin-token-0123456789"
SCANNER = log(result("src/calc.py", 9, ruleId="env-secret", level="error",
                     message={"text": "A secret read from the environment is returned"}), name="scanner")
LATER = log(result("src/calc.py", 1, ruleId="unused-import", level="warning",
                   message={"text": "os is imported at the top level"}), name="linter-ish")


async def _upload(world: World, document: dict, sha: str) -> str:
    body = {"commit_sha": sha, "ref": "refs/heads/feature", "sarif": encode(document)}
    async with aiohttp.ClientSession() as http, http.post(
            f"{world.url}/v1/repos/{world.repo.full_name}/code-scanning/sarifs", json=body,
            headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        assert response.status == 202, await response.text()
        return str((await response.json())["id"])


async def _open_findings(world: World) -> int:
    async with aiohttp.ClientSession() as http, http.get(f"{world.url}/metrics") as response:
        found = re.search(r'^reviewer_findings\{state="open"\} (\d+)$', await response.text(), re.M)
    assert found
    return int(found.group(1))


async def test_the_model_s_and_the_analyzers_findings_are_all_counted(tmp_path, github, github_app, app_private_key,
                                                                     chat):
    chat.answer(PRIMARY, findings(BUG))  # the model: line 6
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat,
                             REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = config_pull(world, "feedback: detailed\n")
        await _upload(world, SCANNER, pr.head_sha)  # an analyzer: line 9, taken up by the review
        await reviewed(world, pr)
        posted = sorted(c.line for r in app_reviews(world, pr) for c in r.comments)
        assert posted == [6, 9]
        assert await _open_findings(world) == 2

        await _upload(world, LATER, pr.head_sha)  # after the review: the upload's own job posts it

        async def three() -> bool:
            return await _open_findings(world) == 3
        await wait_for(three, 20)
        assert sorted(c.line for r in app_reviews(world, pr) for c in r.comments) == [1, 6, 9]
