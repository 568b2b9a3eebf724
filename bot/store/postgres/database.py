"""The PostgreSQL connection pool every PostgreSQL store shares, and what its failures mean.

psycopg 3's async pool: every connection is checked before use (`check_connection`, one round
trip), so that one left from before a restart of the server is replaced instead of failing a
request. (Checking only connections idle for a while saved a round trip a statement under load,
but left a job stuck after a restart in the process tests; see the commit that put this back.)
A pool that cannot hand one out in `TIMEOUT` seconds fails the call instead of holding a webhook
request: the caller sees StoreUnavailable (the webhook answers 503) and the pool reconnects on its
own in the background.

Two sleeps of psycopg_pool would outlast `TIMEOUT` right after PostgreSQL comes back, and refuse a
request although the server answers (tests/store/test_pg_pool.py):
- a request that meets a connection failing its check takes the next idle one, and waits 1 s,
  2 s, 4 s... between further failed checks; after a restart every idle connection is from before
  it, so with four or more idle the request timed out. The first failed check therefore checks
  every idle connection at once (`pool.check()`, which replaces the broken ones), and the request
  then gets a working or a new connection.
- reconnection attempts back off the same way for `reconnect_timeout`: after an outage of a
  minute the next attempt can be half a minute away. A chain of attempts gives up after
  RECONNECT_TIMEOUT (gaps of at most two seconds), and the next request that finds no connection
  starts a new one at once. `connect_timeout` bounds an attempt to a host that does not answer.
`pool()` builds such a pool; procrastinate's connector is given it too (bot/server/jobs/pg_queue.py).

A process has one `Database` (bot/store/stores.py builds it with the `PostgresStorage` and hands it
to every other store of the process: sign-in, review memory, learnings, budgets, uploads, the
repository index). `open()` opens its pool, `migrate()` brings the database to the latest schema
once for all of them (`PostgresStorage.open` does both), and `ready()` does what is still to do
for a store used first. Its connections are named `reviewer stores-N` in `pg_stat_activity`
(`application_name`, N the number of the pool in its process), so that the process's
pool can be told from procrastinate's (`reviewer queue`) and the migrations' (`reviewer
migrations`).

Statements are not prepared (`prepare_threshold=None`): a transaction-mode PgBouncer may hand each
transaction another server connection, where a prepared statement does not exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import psycopg_pool

from bot.store.model import StoreUnavailable
from bot.store.postgres import migrations, refusals
from bot.store.urls import redact_url

TIMEOUT = 5.0  # seconds to wait for a connection before answering "unavailable"
RECONNECT_TIMEOUT = 4.0  # seconds a chain of reconnection attempts goes on before a request starts another
CONNECT_TIMEOUT = 5  # seconds (libpq's whole seconds) one connection attempt may take
MIN_SIZE, MAX_SIZE = 1, 20  # a GitHub write or token fetch holds one for its lock
APPLICATION_NAME = "reviewer"  # the stores' pools are "reviewer stores-N" in pg_stat_activity
_NUMBERS = itertools.count(1)  # the pools of this process, in the order they are made


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


class _CheckAll:
    """The pool's check before use: a connection that fails it is seldom alone (a restart broke
    every connection opened before it), so the idle ones are all checked now, before the request
    takes the next one (psycopg_pool would wait 1 s, 2 s, 4 s... between them)."""

    def __init__(self) -> None:
        self.pool: psycopg_pool.AsyncConnectionPool | None = None
        self._checking = False

    async def __call__(self, conn: psycopg.AsyncConnection) -> None:
        try:
            await psycopg_pool.AsyncConnectionPool.check_connection(conn)
        except Exception:
            if self.pool is not None and not self._checking:  # one sweep at a time takes them all
                self._checking = True
                try:
                    await self.pool.check()
                finally:
                    self._checking = False
            raise


def pool(conninfo: str, *, min_size: int = MIN_SIZE, max_size: int = MAX_SIZE, timeout: float = TIMEOUT,
         kwargs: dict[str, Any] | None = None, **options: Any) -> psycopg_pool.AsyncConnectionPool:
    """A closed pool that recovers promptly from a restart of PostgreSQL (see the module's doc).
    Its signature is psycopg_pool's, so that procrastinate's connector can build it as its
    `pool_factory`; a `check` or `reconnect_timeout` given is replaced by this module's."""
    options.pop("check", None)
    options.pop("reconnect_timeout", None)
    options["open"] = False
    check = _CheckAll()
    made = psycopg_pool.AsyncConnectionPool(
        conninfo, min_size=min_size, max_size=max_size, timeout=timeout,
        kwargs={"connect_timeout": CONNECT_TIMEOUT, **(kwargs or {})},
        check=check, reconnect_timeout=RECONNECT_TIMEOUT, **options)
    check.pool = made
    return made


class Database:
    def __init__(self, url: str, *, min_size: int = MIN_SIZE, max_size: int = MAX_SIZE) -> None:
        self.url = url
        name = f"{APPLICATION_NAME} stores-{next(_NUMBERS)}"
        self.pool = pool(url, min_size=min_size, max_size=max_size, name=name,
                         kwargs={"autocommit": True, "prepare_threshold": None, "application_name": name})
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop the pool was opened on
        self.migrated = False
        self.closed = False  # a closed pool is not opened again: a late call is refused
        self._readying = asyncio.Lock()

    async def open(self) -> None:
        """Open the pool; StoreRefused when PostgreSQL refuses the connection (a missing database, a
        wrong password: bot/store/postgres/refusals.py says which), StoreUnavailable when not even
        one connection can be made now. One connection is tried first, so that either is said at
        once, before the pool's background attempts (which would retry what cannot succeed)."""
        await refusals.connect_once(self.url)
        await self.pool.open(wait=False)
        try:
            await self.pool.wait(timeout=TIMEOUT)
        except psycopg_pool.PoolTimeout as exc:
            await self.pool.close()
            raise StoreUnavailable("PostgreSQL cannot be reached") from exc
        self.loop = asyncio.get_running_loop()

    async def migrate(self) -> int:
        """Bring the database to the latest schema (bot.store.postgres.migrations, under their
        lock), on a connection of the migrations' own; the version it had. SchemaTooNew for a
        database a newer release migrated."""
        version = await asyncio.to_thread(migrations.migrate_url, self.url, redact_url(self.url))
        self.migrated = True  # only once the migrations have committed
        return version

    async def ready(self) -> None:
        """Open and migrated, for a store whose first call comes before the storage opened the
        pool (a store used alone): what is not done yet is done now, once."""
        if self.loop is not None and self.migrated:
            return
        if self.closed:
            raise StoreUnavailable("the PostgreSQL store is closed")
        async with self._readying:
            if self.loop is None:
                await self.open()
            if not self.migrated:
                await self.migrate()

    async def close(self) -> None:
        await self.pool.close()
        self.loop, self.closed = None, True

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
