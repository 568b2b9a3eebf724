"""The embedded backend: every table in one SQLite file (`sqlite:///path.db`).

`SQLiteStorage(url)` migrates the file (bot.store.sqlite.migrations, as bot.store.migrate_database does)
when it opens, then opens each concern's store on it: deliveries (with installations and the console's timeline: they share
its writer, as does the audit log) and connectors.
"""

from __future__ import annotations

import asyncio
import sqlite3

from bot.store.sqlite import database, migrations
from bot.store.sqlite.audit import SQLiteAuditStore
from bot.store.sqlite.connectors import SQLiteConnectorStore
from bot.store.sqlite.deliveries import SQLiteDeliveryStore
from bot.store.sqlite.timeline import SQLiteTimelineStore


class SQLiteStorage:
    def __init__(self, url: str) -> None:
        self.url = url
        self.path = database.sqlite_path(url)  # ValueError for a URL it cannot use
        self.deliveries = SQLiteDeliveryStore(self.path)
        self.connectors = SQLiteConnectorStore(self.path)
        self.timeline = SQLiteTimelineStore(self.deliveries)  # on the deliveries' writer
        self.audit = SQLiteAuditStore(self.deliveries)  # on the deliveries' writer too
        self.coordination = None  # one process: the GitHub client's own in-memory locks

    async def open(self) -> None:
        """Migrate (SchemaTooNew for a file a newer release migrated), then open the stores."""
        await asyncio.to_thread(migrations.migrate_file, self.path)
        await self.deliveries.open()
        await self.connectors.open()

    async def close(self) -> None:
        await self.connectors.close()
        await self.deliveries.close()

    async def schema_version(self) -> int:
        def read() -> int:
            with sqlite3.connect(self.path) as conn:
                return migrations.current_version(conn)
        return await asyncio.to_thread(read)
