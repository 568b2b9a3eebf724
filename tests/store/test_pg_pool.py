"""The PostgreSQL pool every PostgreSQL store shares (bot.store.postgres.database), on a throwaway
cluster of the test's own that it restarts: a request after PostgreSQL comes back is served, not
refused, however many connections the pool held from before and however long it was away."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from bot.store.model import StoreUnavailable
from bot.store.postgres.database import Database


@contextlib.asynccontextmanager
async def opened(url: str) -> AsyncIterator[Database]:
    db = Database(url)
    await db.open()
    try:
        yield db
    finally:
        await db.close()


async def _grow(db: Database, size: int) -> None:
    """Have the pool open `size` connections (held at once, then given back idle)."""
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(size):
            conn = await stack.enter_async_context(db.connection())
            await conn.execute("SELECT 1")


async def test_a_request_after_a_quick_restart_is_served_whatever_the_pool_held(pg_cluster):
    """Every idle connection is from before the restart: the first request must not meet them one
    by one (psycopg_pool waits 1 s, 2 s, 4 s... between failed checks, past the pool's timeout)."""
    async with opened(pg_cluster.url) as db:
        await _grow(db, 8)
        pg_cluster.stop("fast")  # blocking: nothing in this process runs while it is away
        pg_cluster.start()
        assert await db.fetch("SELECT 41 + 1") == [(42,)]
        # and the pool is whole again: as many requests at once as before are all served
        assert await asyncio.gather(*(db.fetch("SELECT %s::int", (n,)) for n in range(8))) == [
            [(n,)] for n in range(8)]


async def test_a_request_after_a_longer_outage_is_served_once_postgresql_answers(pg_cluster):
    """While PostgreSQL is away the pool's reconnection attempts back off (1 s, 2 s, 4 s, 8 s...);
    the first request after it is back must not wait out that sleep and be refused."""
    async with opened(pg_cluster.url) as db:
        await asyncio.to_thread(pg_cluster.stop, "immediate")
        for _ in range(4):  # requests while it is away are refused, and the pool backs off meanwhile
            with pytest.raises(StoreUnavailable):
                await db.fetch("SELECT 1")
        await asyncio.to_thread(pg_cluster.start)
        assert await db.fetch("SELECT 41 + 1") == [(42,)]
