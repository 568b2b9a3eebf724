"""`AuthStore` (bot/auth/store.py) on the server's SQLite file, with its own connection, so every
process on that file sees the same sessions.

The tables are the server's migrations' (bot.store.sqlite.migrations, version 6): opening the store
brings the file to the latest schema first (`bot.store.migrate_database`), so a store opened alone
finds them, and a file a newer release migrated is refused (SchemaTooNew). The SQL is plain (TEXT,
REAL and INTEGER columns, no SQLite-only statements) so the PostgreSQL twin (bot/store/signin/
postgres.py) writes the same methods. Records are JSON bodies: the interface carries dicts, and the
tables only index what is looked up.

Single use is decided by the DELETE itself: of two callers taking the same state, only the one
whose DELETE removed the row gets it (another process included).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from typing import Any

from bot.store import migrate_database
from bot.store.sqlite.database import connect, sqlite_url

SIGNIN_LOG_KEEP = 10_000  # newest entries kept
# Failures of requests that showed nothing of a sign-in under way (a login started with an unknown
# connector, a SAML response nobody asked for): anyone can make them, so they are kept apart, fewer,
# and can never push a real entry out (bot/auth/signin_log.py).
SIGNIN_NOISE_KEEP = 1_000
_NOISE = "coalesce(json_extract(body, '$.unauthenticated'), 0)"


class SqliteAuthStore:
    """`AuthStore` on a SQLite file; blocking work runs on a thread, one statement set at a time."""

    def __init__(self, path: str, clock: Any = time.time) -> None:
        self.path = path
        self.clock = clock
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    async def open(self) -> None:
        """Migrate the file (SchemaTooNew for a newer one), then connect."""
        await migrate_database(sqlite_url(self.path))
        await asyncio.to_thread(self._open)

    def _open(self) -> None:
        # the store's settings: WAL, FULL sync, busy timeout
        self._db = connect(self.path, check_same_thread=False)

    async def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    async def _run(self, work: Any) -> Any:
        def locked() -> Any:
            with self._lock:
                if self._db is None:
                    raise RuntimeError(f"the sign-in store {self.path} is not open")
                return work(self._db)
        return await asyncio.to_thread(locked)

    async def put_pending(self, key: str, body: dict[str, Any], expires_at: float) -> None:
        now = self.clock()

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM auth_pending WHERE expires_at < ?", (now,))
            db.execute("INSERT INTO auth_pending (id, body, expires_at) VALUES (?, ?, ?)",
                       (key, json.dumps(body), expires_at))
        await self._run(work)

    async def take_pending(self, key: str) -> dict[str, Any] | None:
        now = self.clock()

        def work(db: sqlite3.Connection) -> dict[str, Any] | None:
            row = db.execute("SELECT body, expires_at FROM auth_pending WHERE id = ?", (key,)).fetchone()
            if row is None or db.execute("DELETE FROM auth_pending WHERE id = ?", (key,)).rowcount != 1:
                return None
            return json.loads(row[0]) if row[1] >= now else None
        return await self._run(work)

    async def put_session(self, key: str, body: dict[str, Any], expires_at: float) -> None:
        now = self.clock()

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM auth_sessions WHERE expires_at < ?", (now,))
            db.execute("DELETE FROM auth_sessions WHERE id = ?", (key,))
            db.execute("INSERT INTO auth_sessions (id, body, expires_at) VALUES (?, ?, ?)",
                       (key, json.dumps(body), expires_at))
        await self._run(work)

    async def get_session(self, key: str) -> dict[str, Any] | None:
        now = self.clock()

        def work(db: sqlite3.Connection) -> dict[str, Any] | None:
            row = db.execute("SELECT body FROM auth_sessions WHERE id = ? AND expires_at >= ?", (key, now)).fetchone()
            return json.loads(row[0]) if row else None
        return await self._run(work)

    async def delete_session(self, key: str) -> bool:
        return await self._run(lambda db: db.execute("DELETE FROM auth_sessions WHERE id = ?", (key,)).rowcount == 1)

    async def sessions(self, limit: int = 1000) -> list[tuple[str, dict[str, Any]]]:
        """The sessions not expired, newest first, each with its key (the token's hash, never the token)."""
        now = self.clock()
        rows = await self._run(lambda db: db.execute(
            "SELECT id, body FROM auth_sessions WHERE expires_at >= ? ORDER BY json_extract(body, '$.created') DESC "
            "LIMIT ?", (now, limit)).fetchall())
        return [(str(row[0]), json.loads(row[1])) for row in rows]

    async def delete_connector_sessions(self, connector: str) -> int:
        """Ends every session signed in through `connector` (deleted: its sessions go with it)."""
        return int(await self._run(lambda db: db.execute(
            "DELETE FROM auth_sessions WHERE json_extract(body, '$.connector') = ?", (connector,)).rowcount))

    async def record_signin(self, body: dict[str, Any]) -> None:
        def work(db: sqlite3.Connection) -> None:
            cursor = db.execute("INSERT INTO auth_signins (at, body) VALUES (?, ?)",
                                (body.get("at", self.clock()), json.dumps(body)))
            if cursor.lastrowid and cursor.lastrowid % 100 == 0:
                for noise, keep in ((0, SIGNIN_LOG_KEEP), (1, SIGNIN_NOISE_KEEP)):
                    db.execute(f"DELETE FROM auth_signins WHERE seq IN (SELECT seq FROM auth_signins WHERE {_NOISE} = ? "
                               "ORDER BY seq DESC LIMIT -1 OFFSET ?)", (noise, keep))
        await self._run(work)

    async def signins(self, limit: int = 100, unauthenticated: bool = False) -> list[dict[str, Any]]:
        rows = await self._run(lambda db: db.execute(
            f"SELECT body FROM auth_signins WHERE {_NOISE} = ? ORDER BY seq DESC LIMIT ?",
            (int(unauthenticated), limit)).fetchall())
        return [json.loads(row[0]) for row in rows]

    async def key(self, name: str, make: Any) -> str:
        """The value stored under `name`, made by `make()` and stored on first use (the first
        writer wins, so every process ends up with the same key)."""
        existing = await self._run(lambda db: db.execute("SELECT value FROM auth_keys WHERE name = ?",
                                                         (name,)).fetchone())
        if existing:
            return str(existing[0])
        candidate = make()

        def work(db: sqlite3.Connection) -> str:
            try:
                db.execute("INSERT INTO auth_keys (name, value) VALUES (?, ?)", (name, candidate))
            except sqlite3.IntegrityError:
                pass
            return str(db.execute("SELECT value FROM auth_keys WHERE name = ?", (name,)).fetchone()[0])
        return await self._run(work)

    async def use_once(self, key: str, expires_at: float) -> bool:
        """Remembers `key` (a SAML assertion id) until `expires_at`; False when it was already used.
        The INSERT decides, so of two processes given the same assertion only one accepts it."""
        now = self.clock()

        def work(db: sqlite3.Connection) -> bool:
            db.execute("DELETE FROM auth_used_ids WHERE expires_at < ?", (now,))
            try:
                db.execute("INSERT INTO auth_used_ids (id, expires_at) VALUES (?, ?)", (key, expires_at))
            except sqlite3.IntegrityError:
                return False
            return True
        return bool(await self._run(work))

    async def put_sso_index(self, session: str, connector: str, name_id: str, body: dict[str, Any],
                            expires_at: float) -> None:
        """What SAML single logout needs of a session (its NameID and SessionIndex), by session key."""
        now = self.clock()

        def work(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM auth_sso_index WHERE expires_at < ?", (now,))
            db.execute("DELETE FROM auth_sso_index WHERE session = ?", (session,))
            db.execute("INSERT INTO auth_sso_index (session, connector, name_id, body, expires_at) "
                       "VALUES (?, ?, ?, ?, ?)", (session, connector, name_id, json.dumps(body), expires_at))
        await self._run(work)

    async def get_sso_index(self, session: str) -> dict[str, Any] | None:
        row = await self._run(lambda db: db.execute("SELECT body FROM auth_sso_index WHERE session = ?",
                                                    (session,)).fetchone())
        return json.loads(row[0]) if row else None

    async def take_sso_sessions(self, connector: str, name_id: str) -> list[tuple[str, dict[str, Any]]]:
        """Removes and returns (session key, body) of every session of that NameID at that connector."""
        def work(db: sqlite3.Connection) -> list[tuple[str, dict[str, Any]]]:
            rows = db.execute("SELECT session, body FROM auth_sso_index WHERE connector = ? AND name_id = ?",
                              (connector, name_id)).fetchall()
            db.execute("DELETE FROM auth_sso_index WHERE connector = ? AND name_id = ?", (connector, name_id))
            return [(row[0], json.loads(row[1])) for row in rows]
        return list(await self._run(work))
