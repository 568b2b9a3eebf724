"""The repository index's store (`IndexStore`, bot/index/store.py) on each backend, and how a
caller opens it for one repository.

`sqlite_stores(path)`: every repository's index in one SQLite file (bot/store/index/sqlite.py);
`postgres_stores(url)`: in the server's PostgreSQL database (bot/store/index/postgres.py);
`open_sqlite_index(path, repo)`: one repository's index in a SQLite file, for a command that
opens it itself (`reviewer context`, the eval cases). Each opens a connection per use (uses run
in threads), and a driver's error raised while the index is open reaches the caller as
`StoreError` (with the driver's message, and the driver's error as its cause), so nothing above
the store names a driver.
"""

from __future__ import annotations

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


def postgres_stores(url: str) -> Callable[[str], AbstractContextManager[PostgresIndex]]:
    """Every repository's index in a PostgreSQL database (full-text and trigram search). The
    database is brought to the latest schema (the server's migrations, which make the index's
    tables) at the first open, once for this opener (the server's), not per connection."""
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
