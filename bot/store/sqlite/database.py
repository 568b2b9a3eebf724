"""The one SQLite file every server store shares: URL parsing and connection settings.

Every table in the file is made by the migrations (bot.store.sqlite.migrations); the stores that
keep theirs in it (connectors, sign-in, review memory) open it with `connect`, so that every
connection gets the same journal and durability settings.

Durability: WAL with `synchronous=FULL`. A webhook is answered 202 only after its row is committed,
and GitHub never redelivers on its own, so a committed delivery must survive a power loss, not just
a process crash; FULL syncs the WAL on every commit (NORMAL would not, and could lose the last
acknowledged deliveries). The intake batches many deliveries into one commit, so the sync is paid
once per batch, not once per request.

Writes from the event loop (`write_transaction`): the statements run on the loop and only the
commit, which holds the sync, on a thread. A thread that ran the statements too would take the GIL
back after each one, and under webhook load each of those hand-offs waits for the busy loop: with
the statements on the loop, `POST /webhook` cost about 40% less CPU per request in
bench/webhooks.py. Nothing slow is left on the loop: no sync, and no wait for the write lock, which
another connection (the connector store's) may hold for a moment; that wait is asynchronous.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

DEFAULT_URL = "sqlite:///reviewer.db"
BUSY_TIMEOUT = 10.0  # seconds to wait for another connection's write lock
_PREFIX = "sqlite:///"


def sqlite_path(url: str) -> str:
    """`sqlite:///reviewer.db` → `reviewer.db` (relative), `sqlite:////var/db/r.db` → `/var/db/r.db`.

    Raises ValueError naming the accepted form. An in-memory database is refused: the store's
    promise (a delivery acknowledged is finished after a restart) needs a file.
    """
    path = url[len(_PREFIX):] if url.startswith(_PREFIX) else ""
    if not path or path == ":memory:" or path.startswith("file:"):
        raise ValueError(
            f"REVIEWER_DATABASE_URL {url!r} is not supported: use sqlite:///relative/path.db "
            "or sqlite:////absolute/path.db")
    return path


def sqlite_url(path: str) -> str:
    """The URL `sqlite_path` reads back as `path` (relative or absolute)."""
    return _PREFIX + path


def connect(path: str, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open (creating its folder) with WAL, synchronous=FULL and a busy timeout for other writers.

    16 KB pages and statement journals in memory: a batch of deliveries (about 3 KB each once
    compressed) then makes about a quarter of the WAL writes, and no temporary file; the intake's
    storage cost about 15% less CPU per row than with 4 KB pages and journals on disk."""
    if path != ":memory:":  # other stores' tests use throwaway in-memory databases
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=check_same_thread, timeout=BUSY_TIMEOUT)
    conn.execute("PRAGMA page_size=16384")  # a new file only; kept by an existing one
    _wal(conn)
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.execute("PRAGMA synchronous=FULL")
    return conn


def _wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL. Two connections creating the file at once may find it busy without SQLite
    calling the busy handler (the switch itself takes the lock), so the wait is ours."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
        time.sleep(0.01)


async def write_transaction(conn: sqlite3.Connection, sync_thread: Executor,
                            work: Callable[[sqlite3.Connection], T]) -> T:
    """Run `work(conn)` in one write transaction on the event loop; commit on `sync_thread`.

    `conn` must have been opened with `busy_timeout=0` (see `begin_immediate`), and the caller
    runs one transaction at a time on it (the group commit does), so the thread and the loop never
    use it at once. `work` must leave no statement running: close the cursors it made.
    """
    await begin_immediate(conn)
    try:
        result = work(conn)
    except BaseException:
        conn.execute("ROLLBACK").close()
        raise
    # Cancelling the caller here does not stop the thread: the commit or its rollback completes.
    await asyncio.get_running_loop().run_in_executor(sync_thread, _commit, conn)
    return result


async def begin_immediate(conn: sqlite3.Connection) -> None:
    """BEGIN IMMEDIATE, waiting for another connection's write lock without blocking the loop."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    delay = 0.001
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE").close()
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() + delay > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


def _commit(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("COMMIT").close()
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK").close()
        raise
