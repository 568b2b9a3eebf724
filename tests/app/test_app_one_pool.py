"""One PostgreSQL pool per process (bot/store/stores.py): a review (the review memory, the budgets,
the learnings, the uploads, and the repository index built and read under its advisory lock) and a
sign-in, run through the app's real HTTP interfaces on PostgreSQL, reach the database only through
the process's one pool of stores, procrastinate's pool, the migrations' connection and the start-up check's.

Read from PostgreSQL itself: `pg_stat_activity` is sampled while they run, and every backend of
the test's database started since is named (`application_name`) by the pool it belongs to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp
import psycopg

from tests.index.test_index_e2e import CHECKOUT_BASE, CHECKOUT_HEAD, PRICING
from tests.support.chat_double import findings
from tests.support.oidc_support import ADMIN_TOKEN, Browser, HostileProvider, Remote, connector_doc, put_connector
from tests.support.review_support import PRIMARY, reviewed, reviewing_app, run_text

# procrastinate's pool, the migrations' connection, and the one connection `serve` makes at start to
# tell a missing database, a wrong password and an unreachable server apart (bot/store/postgres/refusals.py)
OTHERS = {"reviewer queue", "reviewer migrations", "reviewer check"}


@contextlib.asynccontextmanager
async def backends(url: str) -> AsyncIterator[dict[int, str]]:
    """The backends of `url`'s database started while the block runs (pid → application_name),
    sampled every 5 ms (a connection opened for one call lives a few)."""
    seen: dict[int, str] = {}
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        since = (await (await conn.execute("SELECT now()")).fetchone() or [None])[0]
        stop = asyncio.Event()

        async def sample() -> None:
            while not stop.is_set():
                cursor = await conn.execute(
                    "SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND backend_start >= %s", (since,))
                seen.update({int(pid): str(name) for pid, name in await cursor.fetchall()})
                await asyncio.sleep(0.005)
        sampling = asyncio.create_task(sample())
        try:
            yield seen
        finally:
            stop.set()
            await sampling


async def test_a_review_an_index_update_and_a_sign_in_share_the_process_s_one_pool(
        tmp_path, github, github_app, app_private_key, chat, pg_url) -> None:
    chat.answer(PRIMARY, findings())
    provider = HostileProvider(claims={"groups": ["admins"]})
    async with backends(pg_url) as seen, provider.serving(), reviewing_app(
            tmp_path, github, github_app, app_private_key, chat, REVIEWER_DATABASE_URL=pg_url,
            REVIEWER_ADMIN_TOKEN=ADMIN_TOKEN) as world:
        pr = world.pull({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE},
                        {"src/checkout.py": CHECKOUT_HEAD})
        run = await reviewed(world, pr)
        assert run.conclusion == "success", run_text(run)
        assert "Repository index: 1 definition(s), 0 caller(s)" in run_text(run)  # built, then read

        async with aiohttp.ClientSession() as http:
            await put_connector(Remote(world.url, http), connector_doc("idp", provider.url, world.url))
        browser = Browser()
        try:
            await browser.get(f"{world.url}/v1/webapi/oidc/login/web?connector_id=idp")
            assert browser.cookie("reviewer_session"), browser.hops
        finally:
            await browser.close()

    pools = {name for name in seen.values() if name not in OTHERS}
    assert len(pools) == 1 and next(iter(pools)).startswith("reviewer stores-"), seen
    assert set(seen.values()) - pools <= OTHERS
