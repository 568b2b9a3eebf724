"""What a review came to, recorded beside its job's state, end to end: a signed webhook → the real
pipeline → the chat-completions double and the GitHub double; then the delivery's row, /metrics,
and a redelivery through the admin API. A review whose models all failed, or whose configuration
is invalid, was a green `done` delivery counted as `outcome="done"` and could not be run again."""

from __future__ import annotations

import sqlite3

import aiohttp
import pytest

from tests.support.app_support import World
from tests.support.chat_double import failing, findings
from tests.support.review_support import (
    BUG,
    CLEAN,
    FALLBACK,
    PRIMARY,
    app_reviews,
    config_pull,
    reviewing_app,
    runs_done,
)
from tests.support.server_support import wait_for

TOKEN = "admin-token-for-outcomes-0123456789abcdef"


async def _row(world: World, delivery: str) -> dict:
    """The delivery's row once its job has ended (read from the server's SQLite file)."""
    def read() -> dict | None:
        conn = sqlite3.connect(world.tmp / "reviewer.db")
        try:
            conn.row_factory = sqlite3.Row
            row = conn.execute("SELECT state, attempts, review_outcome, review_reason FROM deliveries "
                               "WHERE delivery_id = ?", (delivery,)).fetchone()
        finally:
            conn.close()
        return dict(row) if row and row["state"] in ("done", "failed") else None

    async def ended() -> dict | None:
        return read()
    return await wait_for(ended)


async def _get(world: World, path: str) -> str:
    async with aiohttp.ClientSession() as http, http.get(world.url + path) as response:
        return await response.text()


async def _opened(world: World, pr, delivery: str) -> None:
    payload = world.github.payload("pull_request", "opened", installation=world.installation, pull=pr)
    assert (await world.deliver("pull_request", payload, delivery_id=delivery))[0] == 202


async def test_a_review_whose_models_all_failed_is_a_failure_and_runs_again(tmp_path, github, github_app,
                                                                              app_private_key, chat):
    chat.answer(PRIMARY, failing(500, "overloaded"))
    chat.answer(FALLBACK, failing(503, "down"))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat,
                             REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = config_pull(world, "approve: true\n")
        await _opened(world, pr, "d-models")
        [run] = await runs_done(world, pr)
        assert run.conclusion == "failure"
        row = await _row(world, "d-models")
        assert (row["state"], row["review_outcome"], row["review_reason"]) == ("done", "failed", "no-usable-answer")
        metrics = await _get(world, "/metrics")
        assert 'reviewer_reviews_total{event="pull_request",outcome="failed",reason="no-usable-answer"} 1' in metrics
        assert 'reviewer_jobs_total{event="pull_request",outcome="done"} 1' in metrics  # the job's own, as before

        chat.answer(PRIMARY, findings(CLEAN))  # the provider is back: run it again
        async with aiohttp.ClientSession() as http, http.post(
                world.url + "/api/deliveries/d-models/redeliver",
                headers={"Authorization": f"Bearer {TOKEN}"}) as response:
            assert response.status == 202, await response.text()
        runs = await runs_done(world, pr, 2)
        assert runs[-1].conclusion == "success"

        async def approved() -> dict | None:
            found = await _row(world, "d-models")
            return found if found["review_outcome"] == "approved" else None
        row = await wait_for(approved)
        assert (row["state"], row["attempts"]) == ("done", 2)
        assert [r.state for r in app_reviews(world, pr)] == ["COMMENTED", "APPROVED"]
        metrics = await _get(world, "/metrics")
        assert 'reviewer_reviews_total{event="pull_request",outcome="approved",reason=""} 1' in metrics

        # Re-run in GitHub's UI: the same head's review again, as it came to
        rerun = world.github.payload("check_run", "rerequested", installation=world.installation, pull=pr,
                                     check_run=runs[-1])
        assert (await world.deliver("check_run", rerun, delivery_id="d-rerun"))[0] == 202
        row = await _row(world, "d-rerun")
        assert (row["review_outcome"], row["review_reason"]) == ("approved", "already-reviewed")


@pytest.mark.parametrize(("config", "outcome", "reason"), [
    ("feedback: verbose\n", "failed", "invalid-config"),
    ("enabled: false\n", "skipped", "disabled"),
    ("approve: true\n", "findings", None),
])
async def test_each_review_records_what_it_came_to(tmp_path, github, github_app, app_private_key, chat, config,
                                                   outcome, reason):
    chat.answer(PRIMARY, findings(BUG))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, config)
        await _opened(world, pr, "d-one")
        await runs_done(world, pr)
        row = await _row(world, "d-one")
        metrics = await _get(world, "/metrics")
    assert (row["state"], row["review_outcome"], row["review_reason"]) == ("done", outcome, reason)
    assert f'reviewer_reviews_total{{event="pull_request",outcome="{outcome}",reason="{reason or ""}"}} 1' in metrics
