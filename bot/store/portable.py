"""Stores written once in portable SQL: one set of statements with `?` placeholders, run on SQLite
or on PostgreSQL (whose connection is wrapped to speak `%s`), one transaction per call on a worker
thread, the schema migrated before the first. The review memory (bot/store/reviews.py), the
learnings (bot/store/learnings.py) and the budgets (bot/store/budgets.py) are such stores; each
subclass says only how its backend opens a transaction (`sqlite_transaction`,
`postgres_transaction`).

In the server, a PostgreSQL store is given the process's pool (`db`, bot/store/stores.py): each call
then takes one of its connections for its transaction, and the statements, run on a worker thread,
are sent on the pool's loop (bot/store/postgres/threaded.py). Without it (a store used alone: a
command, a test) each call opens a connection of its own."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bot.store import migrate_database
from bot.store.model import StoreUnavailable
from bot.store.sqlite.database import connect, sqlite_path
from bot.store.urls import is_postgres

if TYPE_CHECKING:
    from bot.store.postgres.database import Database
    from bot.store.postgres.threaded import ThreadConn

T = TypeVar("T")


class Conn(Protocol):
    """What the statements need of a connection: sqlite3's, or `PostgresConn` around psycopg's."""

    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any: ...


class PostgresConn:
    """psycopg's connection speaking the `?` placeholders of the shared statements."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        cursor = self._conn.cursor()
        cursor.executemany(sql.replace("?", "%s"), list(rows))
        return cursor


class PooledConn:
    """A connection of the process's pool, used from a worker thread, speaking `?` placeholders."""

    def __init__(self, conn: ThreadConn) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any:
        return self._conn.executemany(sql.replace("?", "%s"), rows)


@contextlib.contextmanager
def sqlite_transaction(path: str) -> Iterator[Conn]:
    """A connection with the store's settings (WAL, FULL sync) in one write transaction: BEGIN
    IMMEDIATE takes the write lock first, so that a read-then-write sees no other writer."""
    conn = connect(path)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()


@contextlib.contextmanager
def postgres_transaction(url: str, **options: Any) -> Iterator[Conn]:
    """A connection of its own, committed on success and rolled back on error; the server away or
    the connection lost is StoreUnavailable (not the caller's fault: the job is tried again)."""
    import psycopg  # only a PostgreSQL deployment needs the driver loaded

    try:
        with psycopg.connect(url, connect_timeout=10, **options) as conn:
            yield PostgresConn(conn)
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"PostgreSQL is unavailable ({type(exc).__name__})") from exc


class PortableStore:
    """The statements of a store on whichever connection its backend gives (`_transaction`), or on
    the process's pool when it is given one (`db`, PostgreSQL)."""

    def __init__(self, database_url: str, db: Database | None = None) -> None:
        self._database_url = database_url
        self._db = db
        self._migrated = False

    def _transaction(self) -> contextlib.AbstractContextManager[Conn]:
        """A transaction of the backend the URL names (a subclass may say more)."""
        if is_postgres(self._database_url):
            return postgres_transaction(self._database_url)
        return sqlite_transaction(sqlite_path(self._database_url))

    async def _run(self, work: Callable[[Conn], T]) -> T:
        if self._db is not None:
            return await _pooled(self._db, work)
        if not self._migrated:
            await migrate_database(self._database_url)
            self._migrated = True  # set only now: the migration has committed

        def call() -> T:
            with self._transaction() as conn:
                return work(conn)
        return await asyncio.to_thread(call)


async def _pooled(db: Database, work: Callable[[Conn], T]) -> T:
    """`work` in one transaction on a connection of the pool, its statements sent from a thread."""
    from bot.store.postgres.threaded import ThreadConn

    await db.ready()
    loop = asyncio.get_running_loop()
    async with db.transaction() as conn:
        return await asyncio.to_thread(work, PooledConn(ThreadConn(conn, loop)))
