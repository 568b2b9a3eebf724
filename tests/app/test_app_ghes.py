"""GitHub Enterprise Server: the whole review against the GitHub double served under `/api/v3`,
as `GITHUB_API_URL=https://ghe.example.com/api/v3` makes the app call it.

The double answers only under its prefix (a request that dropped the path is a violation, and the
fixture fails the test on any), so every URL the app builds — routes, the installation-token call,
pagination links — must keep the API root's path.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import aiohttp
import pytest

from tests.support.app_support import registered_app, running_app, started_github
from tests.support.chat_double import Reply, findings
from tests.support.followup_support import finished
from tests.support.github_double import App, GitHubDouble
from tests.support.review_support import (
    BUG,
    CALC_HEAD,
    CLEAN,
    PRIMARY,
    admin_yaml,
    config_pull,
    inline_comments,
    push_reviewed,
    reviewed,
    runs_done,
    shown,
)


@pytest.fixture
async def ghes() -> AsyncIterator[GitHubDouble]:
    async with started_github(api_prefix="/api/v3") as double:
        yield double


@pytest.fixture
def ghes_app(ghes: GitHubDouble, app_private_key: str) -> App:
    return registered_app(ghes, app_private_key)


async def test_a_review_a_push_and_a_question_under_api_v3(tmp_path, ghes, ghes_app, app_private_key, chat):
    assert ghes.url.endswith("/api/v3")
    chat.answer(PRIMARY, findings(BUG))
    async with running_app(tmp_path, ghes, ghes_app, app_private_key, admin_yaml=admin_yaml(chat)) as world:
        pr = config_pull(world, "approve: true\n")
        first = await reviewed(world, pr)
        # a push: reviewed for what changed since (the compare call), then approved
        chat.answer(PRIMARY, findings(CLEAN))
        second = await push_reviewed(world, pr, {"src/calc.py": CALC_HEAD.replace("a / b", "a / b if b else 0.0")})
        # a question in a comment: the commenter's permission, the conversation, the answer
        world.repo.permissions["alice"] = "write"
        chat.answer(PRIMARY, Reply(content="Because the divisor may be zero."))
        question = pr.comment("@reviewer why was the first head refused?", "alice")
        payload = ghes.payload("issue_comment", "created", installation=world.installation, pull=pr, comment=question)
        delivery = str(uuid.uuid4())
        assert (await world.deliver("issue_comment", payload, delivery))[0] == 202
        assert await finished(world, delivery) == "done"

    assert first.conclusion == "failure" and first.output["title"] == "1 blocking finding(s)"
    assert [c.line for c in inline_comments(world, pr)][:1] == [6]
    # the push fixed it: the app closed its thread through GHES's GraphQL (/api/graphql)
    assert pr.thread_resolved(inline_comments(world, pr)[0])
    assert [c.fields for c in ghes.graphql_calls if c.operation == "mutation"] == [("resolveReviewThread",)]
    assert second.conclusion == "success"
    assert any(r.state == "APPROVED" for r in pr.reviews if r.user == world.app.bot)
    assert "Because the divisor may be zero." in [shown(c.body) for c in pr.comments if c.user == world.app.bot]
    routes = {call.route for call in ghes.calls}
    assert {"POST /app/installations/{installation_id}/access_tokens", "POST /repos/{owner}/{repo}/check-runs",
            "GET /repos/{owner}/{repo}/compare/{basehead}", "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
            "GET /repos/{owner}/{repo}/collaborators/{username}/permission"} <= routes
    assert all(call.route is not None for call in ghes.calls)  # every call matched an operation under /api/v3


async def test_the_console_links_to_the_servers_own_web_address(tmp_path, ghes, ghes_app, app_private_key, chat):
    """Under GitHub Enterprise Server the pull request, the commit and the check run live on its own
    web address (its origin, GITHUB_API_URL without `/api/v3`), never on github.com."""
    chat.answer(PRIMARY, findings(BUG))
    token = "admin-token-for-ghes-links-0123456789abcdef"
    async with running_app(tmp_path, ghes, ghes_app, app_private_key, admin_yaml=admin_yaml(chat),
                           REVIEWER_ADMIN_TOKEN=token) as world, \
            aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True), headers={"Origin": world.url}) as browser:
        pr = config_pull(world, "approve: true\n")
        payload = ghes.payload("pull_request", "opened", installation=world.installation, pull=pr)
        assert (await world.deliver("pull_request", payload, "d-ghes-links"))[0] == 202
        [run] = await runs_done(world, pr)
        async with browser.post(world.url + "/console/login/token", data={"token": token}) as response:
            assert response.status == 200
        async with browser.get(world.url + "/console/deliveries/d-ghes-links") as response:
            page = await response.text()
        async with browser.get(f"{world.url}/console/repos/{pr.repo.full_name}") as response:
            repo_page = await response.text()
        async with browser.get(f"{world.url}/console/repos/{pr.repo.full_name}/pulls/{pr.number}") as response:
            pull_page = await response.text()
    web = f"{ghes.origin}/{pr.repo.full_name}"
    assert f'href="{web}/pull/{pr.number}"' in page and f'href="{web}/commit/{pr.head_sha}"' in page
    assert f'href="{web}/runs/{run.id}"' in page
    assert f'href="{web}"' in repo_page and f'href="{web}/pull/{pr.number}"' in pull_page
    assert not any("https://github.com/" in shown for shown in (page, repo_page, pull_page))
