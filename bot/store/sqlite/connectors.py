"""Connector objects in SQLite, beside the server's other tables in the same database file.

Writes are optimistic (bot.store.model.ConnectorStore): the read, the compare and the write share
one IMMEDIATE transaction, so two writers holding the same version cannot both succeed (another
process on the same file included). One connection, opened with the store's settings
(`database.connect`), is shared under a lock; each call runs on a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterator

from bot.store.model import Build, Conflict
from bot.store.sqlite.database import connect

Objects = list[dict]  # (named here: `list` is a method's name inside the class)


class SQLiteConnectorStore:
    def __init__(self, path: str) -> None:
        """`path` is the server's SQLite file; nothing is opened until `open`."""
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    async def open(self) -> None:
        """Connect (the tables are the migrations' business: bot.store.sqlite.migrations)."""
        await asyncio.to_thread(self._open)

    def _open(self) -> None:
        with self._lock:
            if self._db is None:
                self._db = connect(self.path, check_same_thread=False)

    async def close(self) -> None:
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    async def get(self, kind: str, name: str) -> dict | None:
        return await asyncio.to_thread(self._get, kind, name)

    async def list(self, kind: str) -> tuple[Objects, str]:
        """Every object of a kind, by name, and the store's current resourceVersion."""
        return await asyncio.to_thread(self._list, kind)

    async def put(self, kind: str, name: str, expected_version: str | None, build: Build) -> tuple[dict, bool]:
        """Creates or replaces `name` with `build(previous)`; (stored object, created).

        `build` runs inside the transaction so that what it derives from the previous object
        (generation, condition times) cannot interleave with another writer. Raises Conflict when
        `expected_version` is given and is not the current one (or the object does not exist).
        """
        return await asyncio.to_thread(self._put, kind, name, expected_version, build)

    async def delete(self, kind: str, name: str) -> dict | None:
        """Removes `name`; the object it was, or None when there was none."""
        return await asyncio.to_thread(self._delete, kind, name)

    @contextlib.contextmanager
    def _transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction takes SQLite's write lock at once, before it reads what it compares."""
        with self._lock:
            db = self._db
            if db is None:
                raise RuntimeError(f"the connector store {self.path} is not open")
            db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _get(self, kind: str, name: str) -> dict | None:
        with self._transaction(write=False) as db:
            row = db.execute("SELECT body FROM connector_resources WHERE kind = ? AND name = ?",
                             (kind, name)).fetchone()
        return json.loads(row[0]) if row else None

    def _list(self, kind: str) -> tuple[Objects, str]:
        """Every object of a kind, by name, and the store's current resourceVersion."""
        with self._transaction(write=False) as db:
            rows = db.execute("SELECT body FROM connector_resources WHERE kind = ? ORDER BY name",
                              (kind,)).fetchall()
            version = _counter(db, "resourceVersion")
        return [json.loads(r[0]) for r in rows], str(version)

    def _put(self, kind: str, name: str, expected_version: str | None, build: Build) -> tuple[dict, bool]:
        """Creates or replaces `name` with `build(previous)`; (stored object, created).

        `build` runs inside the transaction so that what it derives from the previous object
        (generation, condition times) cannot interleave with another writer. Raises Conflict when
        `expected_version` is given and is not the current one (or the object does not exist).
        """
        with self._transaction() as db:
            row = db.execute("SELECT resource_version, body FROM connector_resources WHERE kind = ? AND name = ?",
                             (kind, name)).fetchone()
            current = str(row[0]) if row else None
            if expected_version is not None and expected_version != current:
                raise Conflict()
            previous = json.loads(row[1]) if row else None
            obj = build(previous)
            version = _next(db, "resourceVersion")
            obj["metadata"]["resourceVersion"] = str(version)
            if previous is None:
                obj["status"]["serviceResourceID"] = _next(db, "serviceResourceID")
                db.execute("INSERT INTO connector_resources (kind, name, resource_version, body) VALUES (?, ?, ?, ?)",
                           (kind, name, version, json.dumps(obj)))
            else:
                updated = db.execute(
                    "UPDATE connector_resources SET resource_version = ?, body = ? "
                    "WHERE kind = ? AND name = ? AND resource_version = ?",
                    (version, json.dumps(obj), kind, name, row[0]))
                if updated.rowcount != 1:
                    raise Conflict()
        return obj, previous is None

    def _delete(self, kind: str, name: str) -> dict | None:
        """Removes `name`; the object it was, or None when there was none."""
        with self._transaction() as db:
            row = db.execute("SELECT body FROM connector_resources WHERE kind = ? AND name = ?",
                             (kind, name)).fetchone()
            if row is None:
                return None
            db.execute("DELETE FROM connector_resources WHERE kind = ? AND name = ?", (kind, name))
            _next(db, "resourceVersion")  # a deletion is a change a lister should see
        return json.loads(row[0])


def _counter(db: sqlite3.Connection, name: str) -> int:
    row = db.execute("SELECT value FROM connector_counters WHERE name = ?", (name,)).fetchone()
    return row[0] if row else 0


def _next(db: sqlite3.Connection, name: str) -> int:
    value = _counter(db, name) + 1
    db.execute("INSERT INTO connector_counters (name, value) VALUES (?, ?) "
               "ON CONFLICT(name) DO UPDATE SET value = excluded.value", (name, value))
    return value
