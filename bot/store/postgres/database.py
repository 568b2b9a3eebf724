"""The PostgreSQL connection pool every PostgreSQL store shares, and what its failures mean.

psycopg 3's async pool. A connection is checked (`check_connection`, one round trip) before it is
handed out when it is new, when it was last handed out IDLE_CHECK seconds ago or more, or when a
statement on any connection has failed since it was last handed out: that is what finds the ones
left from before a restart of the server, and replaces them instead of failing a request. One
handed out moments ago, with no failure since, is used as it is: under load that is nearly every
connection, and checking each would double the round trips. A pool that cannot hand one out in
`TIMEOUT` seconds fails the call instead of holding a webhook request: the caller sees
StoreUnavailable (the webhook answers 503) and the pool reconnects on its own in the background.

Statements are not prepared (`prepare_threshold=None`): a transaction-mode PgBouncer may hand each
transaction another server connection, where a prepared statement does not exist.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import AsyncIterator

import psycopg
import psycopg_pool

from bot.store.model import StoreUnavailable

TIMEOUT = 5.0  # seconds to wait for a connection before answering "unavailable"
MIN_SIZE, MAX_SIZE = 1, 20  # a GitHub write or token fetch holds one for its lock
IDLE_CHECK = 2.0  # seconds since a connection was last handed out after which it is checked again


def dropped(exc: BaseException | None) -> bool:
    """A statement failed on its connection (the server went away, a restart): not a pool that
    had no connection to give in time, which psycopg_pool's PoolTimeout (an OperationalError
    too) says."""
    return isinstance(exc, psycopg.OperationalError) and not isinstance(exc, psycopg_pool.PoolTimeout)


class Database:
    def __init__(self, url: str, *, min_size: int = MIN_SIZE, max_size: int = MAX_SIZE) -> None:
        self.url = url
        self.pool = psycopg_pool.AsyncConnectionPool(
            url, min_size=min_size, max_size=max_size, open=False, timeout=TIMEOUT,
            kwargs={"autocommit": True, "prepare_threshold": None},
            check=self._check_unless_fresh, reconnect_timeout=3600)
        self._handed_out: weakref.WeakKeyDictionary[psycopg.AsyncConnection, float] = weakref.WeakKeyDictionary()
        self._failed_at = float("-inf")  # when a statement last failed on a broken connection

    async def _check_unless_fresh(self, conn: psycopg.AsyncConnection) -> None:
        """The pool's check as it hands a connection out (see the module's docstring)."""
        now = time.monotonic()
        last = self._handed_out.get(conn)
        self._handed_out[conn] = now
        if last is None or now - last >= IDLE_CHECK or last <= self._failed_at:
            await psycopg_pool.AsyncConnectionPool.check_connection(conn)

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
            if dropped(exc):
                self._failed_at = time.monotonic()  # every connection handed out before is checked
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
