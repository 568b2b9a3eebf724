"""Budgets counted across processes on PostgreSQL: two `reviewer serve` processes sharing one
REVIEWER_DATABASE_URL, each running its own jobs, spend one account's reviews a day together."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.app_support import World, installed
from tests.support.chat_double import ChatDouble, findings
from tests.support.review_support import API_KEY, BUG, KEY_VAR, PRIMARY, admin_yaml, config_pull
from tests.support.scale_support import Proc, deliver_to, processes, world_env
from tests.support.server_support import wait_for


@pytest.fixture
def world(tmp_path, github, github_app) -> World:
    return installed(tmp_path, github, github_app)


def serve(world, private_key: str, url: str, **extra: str) -> Proc:
    """A whole server (web and workers) of its own on the shared database."""
    return Proc(["serve"], world_env(world, private_key, url, **extra), world.tmp)


async def test_two_servers_share_an_accounts_reviews_a_day(world, app_private_key, pg_url, tmp_path):
    chat = await ChatDouble(api_key=API_KEY).start()
    chat.answer(PRIMARY, findings(BUG, usage=(400, 40)))
    admin = tmp_path / "admin.yaml"
    admin.write_text(admin_yaml(chat) + "accounts:\n  octo-org:\n    budgets: {reviewsPerDay: 2}\n")
    extra = {"REVIEWER_ADMIN_CONFIG": str(admin), KEY_VAR: API_KEY}
    pulls = [config_pull(world, "feedback: detailed\n") for _ in range(3)]
    try:
        with processes(lambda: serve(world, app_private_key, pg_url, **extra)) as (first,):
            assert await deliver_to(world, first.url, pulls[0], "delivery-1") == 202
            one = await world.completed_run(pulls[0], timeout=60)

            async def first_done() -> bool:
                return "job done" in first.messages()  # the first server ran the first review, to its end
            await wait_for(first_done, timeout=30)
        with processes(lambda: serve(world, app_private_key, pg_url, **extra)) as (second,):
            assert await deliver_to(world, second.url, pulls[1], "delivery-2") == 202
            two = await world.completed_run(pulls[1], timeout=60)
            assert await deliver_to(world, second.url, pulls[2], "delivery-3") == 202
            three = await world.completed_run(pulls[2], timeout=60)
    finally:
        await chat.close()
    assert [one.conclusion, two.conclusion, three.conclusion] == ["failure", "failure", "neutral"]
    assert len(chat.requests) == 2  # the third review was never sent to a model
    assert three.output["title"] == "Not reviewed: the account's budget of 2 reviews a day is spent"
    assert "`accounts.octo-org.budgets.reviewsPerDay`" in three.output["summary"]
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT account, period LIKE 'day:%', reviews, tokens FROM budget_usage "
                            "ORDER BY period").fetchall()
    assert rows == [("octo-org", True, 2, 0), ("octo-org", False, 0, 880)]  # 2 × (400 + 40) tokens this month
