"""The audit log in the SQLite file: the AuditStore of bot.store.model.

Entries are few (an administrator's changes), so they go through the delivery store's group commit
like the timeline's rows, instead of a second connection waiting for the file's one write lock.
"""

from __future__ import annotations

import json
import sqlite3

from bot.store.model import AuditEntry, AuditQuery
from bot.store.sqlite.deliveries import SQLiteDeliveryStore

_COLUMNS = "seq, at, actor, ip, action, target, account, details"


class SQLiteAuditStore:
    def __init__(self, deliveries: SQLiteDeliveryStore) -> None:
        self.deliveries = deliveries

    async def record(self, entry: AuditEntry) -> int:
        """Appends `entry` (its `seq` is ignored); returns the seq it was given."""
        row = (entry.at, entry.actor, entry.ip, entry.action, entry.target, entry.account,
               json.dumps(entry.details, sort_keys=True))

        def insert(conn: sqlite3.Connection) -> int:
            cursor = conn.execute("INSERT INTO audit_log (at, actor, ip, action, target, account, details) "
                                  "VALUES (?, ?, ?, ?, ?, ?, ?)", row)
            seq = cursor.lastrowid
            cursor.close()
            return int(seq or 0)
        return int(await self.deliveries.write_op(insert))

    async def entries(self, query: AuditQuery) -> list[AuditEntry]:
        where, params = _where(query)

        def read(conn: sqlite3.Connection) -> list[AuditEntry]:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM audit_log{where} ORDER BY seq DESC LIMIT ?",
                                (*params, query.limit)).fetchall()
            return [_entry(row) for row in rows]
        return await self.deliveries.read_op(read)

    async def prune(self, before: float, limit: int) -> int:
        """Deletes up to `limit` entries older than `before` (epoch seconds); returns how many."""
        return int(await self.deliveries.write_op(lambda conn: conn.execute(
            "DELETE FROM audit_log WHERE seq IN (SELECT seq FROM audit_log WHERE at < ? LIMIT ?)",
            (before, limit))))


def _where(query: AuditQuery) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    for clause, value in (("seq < ?", query.before_seq), ("actor = ?", query.actor), ("action = ?", query.action),
                          ("at >= ?", query.since), ("at < ?", query.until)):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    if query.with_account:
        clauses.append("account IS NOT NULL")
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _entry(row: tuple) -> AuditEntry:
    seq, at, actor, ip, action, target, account, details = row
    return AuditEntry(at=float(at), actor=actor, ip=ip, action=action, target=target, account=account,
                      details=json.loads(details), seq=int(seq))
