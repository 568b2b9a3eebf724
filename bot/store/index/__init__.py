"""The repository index's store (`IndexStore`, bot/index/store.py) on each backend, and how a
caller opens it for one repository.

`sqlite_stores(path)`: every repository's index in one SQLite file (bot/store/index/sqlite.py);
`postgres_stores(db)`: in the server's PostgreSQL database (bot/store/index/postgres.py), on a
connection of the process's pool (`db`) per use, or given a URL (an index opened alone) on a
connection of its own per use;
`open_sqlite_index(path, repo)`: one repository's index in a SQLite file, for a command that
opens it itself (`reviewer context`, the eval cases). Each opens a connection per use (uses run
in threads), and a driver's error raised while the index is open reaches the caller as
`StoreError` (with the driver's message, and the driver's error as its cause), so nothing above
the store names a driver.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from bot.store.index.sqlite import SqliteIndex, connect
from bot.store.model import StoreError

if TYPE_CHECKING:
    import psycopg

    from bot.store.index.postgres import PostgresIndex
    from bot.store.postgres.database import Database


@contextlib.contextmanager
def open_sqlite_index(path: str, repo: str) -> Iterator[SqliteIndex]:
    """`repo`'s index in the SQLite file at `path`, closed when the block ends."""
    try:
        conn = connect(path)
    except sqlite3.Error as exc:
        raise StoreError(str(exc)) from exc
    try:
        yield SqliteIndex(conn, repo)
    except sqlite3.Error as exc:
        raise StoreError(str(exc)) from exc
    finally:
        conn.close()


def sqlite_stores(path: str) -> Callable[[str], AbstractContextManager[SqliteIndex]]:
    """Every repository's index in one SQLite file, a connection per use (uses run in threads)."""
    return lambda repo: open_sqlite_index(path, repo)


def postgres_stores(database: str | Database) -> Callable[[str], AbstractContextManager[PostgresIndex]]:
    """Every repository's index in a PostgreSQL database (full-text and trigram search). The
    database is brought to the latest schema (the server's migrations, which make the index's
    tables) at the first open, once for this opener (or for the pool), not per connection."""
    if not isinstance(database, str):
        return _pooled_stores(database)
    url = database
    import psycopg

    from bot.store.index.postgres import PostgresIndex, connect_pg

    migrating = threading.Lock()
    ready = False

    def connect() -> psycopg.Connection:
        nonlocal ready
        if ready:
            return connect_pg(url, schema=False)
        with migrating:
            conn = connect_pg(url, schema=not ready)
            ready = True  # only once the migrations have committed
            return conn

    @contextlib.contextmanager
    def open_store(repo: str) -> Iterator[PostgresIndex]:
        try:
            conn = connect()
        except psycopg.Error as exc:
            raise StoreError(str(exc)) from exc
        try:
            yield PostgresIndex(conn, repo)
        except psycopg.Error as exc:
            raise StoreError(str(exc)) from exc
        finally:
            conn.close()
    return open_store


def _pooled_stores(db: Database) -> Callable[[str], AbstractContextManager[PostgresIndex]]:
    """The indexes on connections of the process's pool, opened from the worker thread a use
    runs on (never from the loop's own thread, which runs the statements): the connection is
    taken out of autocommit for the opening (its statements are one transaction, that `finish`
    or `drop` commits, with the advisory lock `lock` took) and put back in autocommit, rolled
    back, when it ends."""
    import psycopg

    from bot.store.index.postgres import PostgresIndex
    from bot.store.postgres.threaded import ThreadConn

    async def take() -> psycopg.AsyncConnection:
        await db.ready()
        conn = await db.pool.getconn()
        try:
            await conn.set_autocommit(False)
        except BaseException:
            await db.pool.putconn(conn)
            raise
        return conn

    async def give_back(conn: psycopg.AsyncConnection) -> None:
        try:
            await conn.rollback()
            await conn.set_autocommit(True)
        except psycopg.Error:
            await conn.close()  # never back in the pool out of autocommit: the pool replaces it
        finally:
            await db.pool.putconn(conn)

    @contextlib.contextmanager
    def open_store(repo: str) -> Iterator[PostgresIndex]:
        loop = db.loop
        if loop is None:
            raise StoreError("the PostgreSQL store is not open")
        try:
            conn = asyncio.run_coroutine_threadsafe(take(), loop).result()
        except psycopg.Error as exc:
            raise StoreError(str(exc)) from exc
        threaded = ThreadConn(conn, loop)
        try:
            yield PostgresIndex(threaded, repo)
        except psycopg.Error as exc:
            raise StoreError(str(exc)) from exc
        finally:
            threaded.call(give_back(conn))
    return open_store
