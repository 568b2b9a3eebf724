"""Connector objects in SQLite, beside the server's own tables in the same database file.

Writes are optimistic, as in Kubernetes: a writer that names the `resourceVersion` it read wins
only if nobody wrote in between; the read, the compare and the write share one IMMEDIATE
transaction, so two writers holding the same version cannot both succeed (another process on the
same file included). The API calls these methods from worker threads; one connection, opened
with the server's settings (`bot.server.database.connect`), is shared under a lock.

`ConnectorStore(path)` touches nothing: the server opens it when the app starts and closes it when
the app stops (`open`, `close`, both blocking: call them off the event loop), so that making the
app creates no file and holds no connection. `ConnectorStore.opened(path)` does both steps at once.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator

from bot.server.database import connect

_SCHEMA = """
CREATE TABLE IF NOT EXISTS connector_resources (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    resource_version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, name)
);
CREATE TABLE IF NOT EXISTS connector_counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
"""


class Conflict(Exception):
    """The object changed (or appeared, or went) since the `resourceVersion` the writer read."""

    def __init__(self) -> None:
        super().__init__("stale resourceVersion")


class ConnectorStore:
    def __init__(self, path: str) -> None:
        """`path` is the server's SQLite file (or `:memory:`); nothing is opened until `open`."""
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    @classmethod
    def opened(cls, path: str) -> ConnectorStore:
        store = cls(path)
        store.open()
        return store

    def open(self) -> None:
        """Connect and create the tables if absent."""
        with self._lock:
            if self._db is None:
                self._db = connect(self.path, check_same_thread=False)
        with self._transaction() as db:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                db.execute(statement)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

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

    def get(self, kind: str, name: str) -> dict | None:
        with self._transaction(write=False) as db:
            row = db.execute("SELECT body FROM connector_resources WHERE kind = ? AND name = ?",
                             (kind, name)).fetchone()
        return json.loads(row[0]) if row else None

    def list(self, kind: str) -> tuple[list[dict], str]:
        """Every object of a kind, by name, and the store's current resourceVersion."""
        with self._transaction(write=False) as db:
            rows = db.execute("SELECT body FROM connector_resources WHERE kind = ? ORDER BY name",
                              (kind,)).fetchall()
            version = _counter(db, "resourceVersion")
        return [json.loads(r[0]) for r in rows], str(version)

    def put(self, kind: str, name: str, expected_version: str | None,
            build: Callable[[dict | None], dict]) -> tuple[dict, bool]:
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

    def delete(self, kind: str, name: str) -> dict | None:
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
