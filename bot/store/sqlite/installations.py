"""Which installations exist and the repositories each reaches, as the installation events said.

The `installations` table (bot.store.sqlite.migrations) lives in the deliveries file; these are its
statements, each a function of a connection that the delivery store runs on its writer (`record`)
or reader (`get`, `reaching`, `every`), so that they share the store's transactions and threads.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from bot.store.installs import change_of, repositories_after


def record(conn: sqlite3.Connection, event: str, payload: dict[str, Any]) -> None:
    """Apply an `installation` or `installation_repositories` event to its installation's row."""
    change = change_of(event, payload)
    row = conn.execute("SELECT repositories FROM installations WHERE id = ?", (change.installation_id,)).fetchone()
    repos = repositories_after(event, payload, set(json.loads(row[0])) if row else set())
    conn.execute(
        "INSERT INTO installations (id, account, last_action, deleted, repositories, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
        "account = coalesce(excluded.account, account), last_action = excluded.last_action, "
        "deleted = excluded.deleted, repositories = excluded.repositories, updated_at = excluded.updated_at",
        (change.installation_id, change.account, change.last_action, int(change.deleted),
         json.dumps(repos), time.time())).close()


def get(conn: sqlite3.Connection, installation_id: int) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT id, account, last_action, deleted, repositories FROM installations WHERE id = ?",
        (installation_id,)).fetchone()
    if row is None:
        return None
    return {"id": row[0], "account": row[1], "last_action": row[2], "deleted": bool(row[3]),
            "repositories": json.loads(row[4])}


def reaching(conn: sqlite3.Connection, full_name: str) -> int | None:
    """The installation recorded to reach `owner/name` (case-insensitive, as GitHub's names are)."""
    row = conn.execute(
        "SELECT installations.id FROM installations, json_each(installations.repositories) AS repo "
        "WHERE installations.deleted = 0 AND lower(repo.value) = lower(?) "
        "ORDER BY installations.updated_at DESC LIMIT 1", (full_name,)).fetchone()
    return row[0] if row else None


def every(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every installation not deleted, by id."""
    rows = conn.execute("SELECT id, account, last_action, deleted, repositories FROM installations "
                        "WHERE deleted = 0 ORDER BY id").fetchall()
    return [{"id": row[0], "account": row[1], "last_action": row[2], "deleted": bool(row[3]),
             "repositories": json.loads(row[4])} for row in rows]
