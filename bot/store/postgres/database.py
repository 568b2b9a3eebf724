"""The PostgreSQL connection pool every PostgreSQL store shares, and what its failures mean.

psycopg 3's async pool: every connection is checked before use (`check_connection`, one round
trip), so that one left from before a restart of the server is replaced instead of failing a
request. (Checking only connections idle for a while saved a round trip a statement under load,
but left a job stuck after a restart in the process tests; see the commit that put this back.)
A pool that cannot hand one out in `TIMEOUT` seconds fails the call instead of holding a webhook
request: the caller sees StoreUnavailable (the webhook answers 503) and the pool reconnects on its
own in the background.

Statements are not prepared (`prepare_threshold=None`): a transaction-mode PgBouncer may hand each
transaction another server connection, where a prepared statement does not exist.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import psycopg
import psycopg_pool

from bot.store.model import StoreUnavailable

TIMEOUT = 5.0  # seconds to wait for a connection before answering "unavailable"
MIN_SIZE, MAX_SIZE = 1, 20  # a GitHub write or token fetch holds one for its lock


def dropped(exc: BaseException | None) -> bool:
    """A statement failed on its connection (the server went away, a restart): not a pool that
    had no connection to give in time, which psycopg_pool's PoolTimeout (an OperationalError
    too) says."""
    return isinstance(exc, psycopg.OperationalError) and not isinstance(exc, psycopg_pool.PoolTimeout)


def unreachable(exc: BaseException | None) -> bool:
    """PostgreSQL could not be reached, or the connection went (a pool with nothing to give in time
    included), anywhere in the chain of causes (a library's own error wraps the driver's): worth
    doing again once it is back, unlike a statement the server refused."""
    while exc is not None:
        if isinstance(exc, psycopg.OperationalError):
            return True
        exc = exc.__cause__
    return False


class Database:
    def __init__(self, url: str, *, min_size: int = MIN_SIZE, max_size: int = MAX_SIZE) -> None:
        self.url = url
        self.pool = psycopg_pool.AsyncConnectionPool(
            url, min_size=min_size, max_size=max_size, open=False, timeout=TIMEOUT,
            kwargs={"autocommit": True, "prepare_threshold": None},
            check=psycopg_pool.AsyncConnectionPool.check_connection, reconnect_timeout=3600)

    async def open(self) -> None:
        """Open the pool; StoreUnavailable when not even one connection can be made now."""
        await self.pool.open(wait=False)
        try:
            await self.pool.wait(timeout=TIMEOUT)
        except psycopg_pool.PoolTimeout as exc:
            await self.pool.close()
            raise StoreUnavailable("PostgreSQL cannot be reached") from exc

    async def close(self) -> None:
        await self.pool.close()

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection]:
        """A connection in autocommit mode; unreachable → StoreUnavailable."""
        try:
            async with self.pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as exc:
            raise StoreUnavailable(f"PostgreSQL is unavailable ({type(exc).__name__})") from exc

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[psycopg.AsyncConnection]:
        """One transaction, committed when the block ends (rolled back if it raises)."""
        async with self.connection() as conn, conn.transaction():
            yield conn

    async def execute(self, query: str, params: tuple | list | None = None) -> int:
        """One statement in its own transaction; the rows it changed."""
        async with self.connection() as conn:
            cursor = await conn.execute(query, params)
            return cursor.rowcount

    async def fetch(self, query: str, params: tuple | list | None = None) -> list[tuple]:
        async with self.connection() as conn:
            cursor = await conn.execute(query, params)
            return await cursor.fetchall()
