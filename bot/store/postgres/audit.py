"""The audit log in PostgreSQL: the AuditStore of bot.store.model. One statement per call on a
pooled connection; `details` is `jsonb`."""

from __future__ import annotations

from psycopg.types.json import Jsonb

from bot.store.model import AuditEntry, AuditQuery
from bot.store.postgres.database import Database


class PostgresAuditStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, entry: AuditEntry) -> int:
        """Appends `entry` (its `seq` is ignored); returns the seq it was given."""
        rows = await self.db.fetch(
            "INSERT INTO audit_log (at, actor, ip, action, target, account, details) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING seq",
            (entry.at, entry.actor, entry.ip, entry.action, entry.target, entry.account, Jsonb(entry.details)))
        return int(rows[0][0])

    async def entries(self, query: AuditQuery) -> list[AuditEntry]:
        clauses: list[str] = []
        params: list[object] = []
        for clause, value in (("seq < %s", query.before_seq), ("actor = %s", query.actor),
                              ("action = %s", query.action), ("at >= %s", query.since), ("at < %s", query.until)):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        if query.with_account:
            clauses.append("account IS NOT NULL")
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        rows = await self.db.fetch(
            "SELECT seq, at, actor, ip, action, target, account, details FROM audit_log"
            f"{where} ORDER BY seq DESC LIMIT %s", (*params, query.limit))
        return [AuditEntry(at=float(at), actor=actor, ip=ip, action=action, target=target, account=account,
                           details=dict(details), seq=int(seq))
                for seq, at, actor, ip, action, target, account, details in rows]

    async def prune(self, before: float, limit: int) -> int:
        """Deletes up to `limit` entries older than `before` (epoch seconds); returns how many."""
        rows = await self.db.fetch(
            "WITH gone AS (DELETE FROM audit_log WHERE seq IN (SELECT seq FROM audit_log WHERE at < %s LIMIT %s) "
            "RETURNING seq) SELECT count(*) FROM gone", (before, limit))
        return int(rows[0][0])
