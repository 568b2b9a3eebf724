"""The one SQLite file every server store shares: URL parsing and connection settings.

Other stores (connector resources) add their own tables to the same file through their own modules;
they open it with `connect` so that every connection gets the same journal and durability settings.

Durability: WAL with `synchronous=FULL`. A webhook is answered 202 only after its row is committed,
and GitHub never redelivers on its own, so a committed delivery must survive a power loss, not just
a process crash; FULL syncs the WAL on every commit (NORMAL would not, and could lose the last
acknowledged deliveries). The intake batches many deliveries into one commit, so the sync is paid
once per batch, not once per request.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

DEFAULT_URL = "sqlite:///reviewer.db"
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


def connect(path: str, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open (creating its folder) with WAL, synchronous=FULL and a busy timeout for other writers."""
    if path != ":memory:":  # other stores' tests use throwaway in-memory databases
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=check_same_thread, timeout=10)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=10000")
    return conn
