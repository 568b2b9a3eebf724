"""A delivery's page after the real pipeline ran it (GitHub double, chat-completions double): the
timeline counts its GitHub and model calls, the check run's conclusion and summary (with the
plan) and the review's decision and findings are shown, and the model's key is nowhere."""

from __future__ import annotations

import aiohttp

from tests.support.app_support import running_app
from tests.support.chat_double import ChatDouble, findings
from tests.support.review_support import API_KEY, BUG, KEY_VAR, NIT, PRIMARY, admin_yaml, config_pull, runs_done

TOKEN = "admin-token-for-console-pipeline"


async def test_a_reviewed_delivery_shows_its_calls_check_run_and_review(tmp_path, github, github_app,
                                                                        app_private_key, monkeypatch):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    chat = await ChatDouble(api_key=API_KEY).start()
    chat.answer(PRIMARY, findings(BUG, NIT))
    try:
        async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin_yaml(chat, 5),
                               REVIEWER_ADMIN_TOKEN=TOKEN) as world, \
                aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True),
                                      headers={"Origin": world.url}) as browser:
            pr = config_pull(world, "feedback: detailed\n")
            payload = github.payload("pull_request", "opened", installation=world.installation, pull=pr)
            status, _ = await world.deliver("pull_request", payload, delivery_id="d-e2e-1")
            assert status == 202
            [run] = await runs_done(world, pr)
            async with browser.post(world.url + "/console/login/token", data={"token": TOKEN}) as response:
                assert response.status == 200
            async with browser.get(world.url + "/console/deliveries/d-e2e-1") as response:
                page = await response.text()
            async with browser.get(world.url + f"/console/repos/{pr.repo.full_name}") as response:
                repo_page = await response.text()
    finally:
        await chat.close()
    assert "1 model call" in page and " GitHub calls" in page
    assert f'state-{run.conclusion}">{run.conclusion}</span>' in page
    # the summary is rendered, not shown as its source: headings and lists, no Markdown marks
    assert "<h2>The plan</h2>" in page and "<h3>Settings</h3>" in page and "### " not in page
    assert "1 blocking finding(s)" in page  # the check run's title
    assert "feedback: detailed; inline comments: on" in page  # the summary, with the plan
    assert "<h2 id=\"review-1\">Review: " in page and "finding" in page and "src/calc.py:" in page
    assert "reviewer:review delivery=" not in page  # the review's hidden marker, hidden here too
    assert f"https://github.com/{pr.repo.full_name}/runs/{run.id}" in page
    assert API_KEY not in page
    # the repository's page lists the delivery with its check run: the last plans
    assert 'd-e2e-1">' in repo_page and "1 blocking finding(s)" in repo_page and API_KEY not in repo_page
