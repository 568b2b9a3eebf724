"""Which installations exist and the repositories each reaches, as the installation events said.

The `installations` table lives in the delivery store's file; these are its statements, each a
function of a connection that the store runs on its writer (`record`) or reader (`get`,
`reaching`), so that they share the store's transactions and threads.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS installations (
    id INTEGER PRIMARY KEY,
    account TEXT,
    last_action TEXT,
    deleted INTEGER NOT NULL DEFAULT 0,
    repositories TEXT NOT NULL DEFAULT '[]',
    updated_at REAL NOT NULL
);
"""


def record(conn: sqlite3.Connection, event: str, payload: dict[str, Any]) -> None:
    """Apply an `installation` or `installation_repositories` event to its installation's row."""
    installation = payload.get("installation") or {}
    inst_id = installation.get("id")
    action = payload.get("action")
    account = (installation.get("account") or {}).get("login")
    row = conn.execute("SELECT repositories FROM installations WHERE id = ?", (inst_id,)).fetchone()
    repos = set(json.loads(row[0])) if row else set()
    if event == "installation" and action in ("created", "new_permissions_accepted", "unsuspend"):
        repos |= _names(payload.get("repositories"))
    repos = (repos | _names(payload.get("repositories_added"))) - _names(payload.get("repositories_removed"))
    conn.execute(
        "INSERT INTO installations (id, account, last_action, deleted, repositories, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
        "account = coalesce(excluded.account, account), last_action = excluded.last_action, "
        "deleted = excluded.deleted, repositories = excluded.repositories, updated_at = excluded.updated_at",
        (inst_id, account, f"{event}.{action}", int(event == "installation" and action == "deleted"),
         json.dumps(sorted(repos)), time.time())).close()


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


def _names(repositories: Any) -> set[str]:
    if not isinstance(repositories, list):
        return set()
    return {r["full_name"] for r in repositories if isinstance(r, dict) and isinstance(r.get("full_name"), str)}
