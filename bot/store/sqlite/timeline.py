"""The admin console's delivery timeline in the SQLite file: the TimelineStore of bot.store.model.

A row is written when a job's attempt ends, so under a backlog's drain many are written at once:
they go through the delivery store's group commit, in the transactions its job updates already
make, instead of a second connection that would wait for the file's one write lock.
"""

from __future__ import annotations

import json
import sqlite3

from bot.store.model import TimelineEntry
from bot.store.sqlite.deliveries import SQLiteDeliveryStore

_UPSERT = ("INSERT INTO delivery_timeline (delivery_id, attempt, body) VALUES (?, ?, ?) "
           "ON CONFLICT (delivery_id, attempt) DO UPDATE SET body = excluded.body")


class SQLiteTimelineStore:
    def __init__(self, deliveries: SQLiteDeliveryStore) -> None:
        self.deliveries = deliveries

    async def write(self, entry: TimelineEntry, wait: bool = True) -> None:
        """Joins the next batch; `wait=False` returns before its commit (a failure is logged): the
        row is committed before the job's end, which is posted after it."""
        row = (entry.delivery_id, entry.attempt, json.dumps(entry.body))
        await self.deliveries.write_op(lambda conn: conn.execute(_UPSERT, row), wait=wait)

    async def attempts(self, delivery_id: str) -> list[TimelineEntry]:
        def query(conn: sqlite3.Connection) -> list[TimelineEntry]:
            rows = conn.execute("SELECT attempt, body FROM delivery_timeline WHERE delivery_id = ? ORDER BY attempt",
                                (delivery_id,)).fetchall()
            return [TimelineEntry(delivery_id, attempt, json.loads(body)) for attempt, body in rows]
        return await self.deliveries.read_op(query)
