"""The admin console's delivery timeline in PostgreSQL: the TimelineStore of bot.store.model.

One statement per write on a pooled connection (PostgreSQL's row locks keep concurrent writers
apart, and each worker process writes its own jobs' rows); bodies are `jsonb`.
"""

from __future__ import annotations

from psycopg.types.json import Jsonb

from bot.store.model import TimelineEntry
from bot.store.postgres.database import Database


class PostgresTimelineStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def write(self, entry: TimelineEntry, wait: bool = True) -> None:
        """Always waited for, `wait` or not: there is no batch to join here (as `finish`)."""
        await self.db.execute(
            "INSERT INTO delivery_timeline (delivery_id, attempt, body) VALUES (%s, %s, %s) "
            "ON CONFLICT (delivery_id, attempt) DO UPDATE SET body = excluded.body",
            (entry.delivery_id, entry.attempt, Jsonb(entry.body)))

    async def attempts(self, delivery_id: str) -> list[TimelineEntry]:
        rows = await self.db.fetch(
            "SELECT attempt, body FROM delivery_timeline WHERE delivery_id = %s ORDER BY attempt", (delivery_id,))
        return [TimelineEntry(delivery_id, int(attempt), dict(body)) for attempt, body in rows]
