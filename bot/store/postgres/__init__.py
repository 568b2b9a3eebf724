"""The scaled-out backend: every table in one PostgreSQL database (`postgresql://...`).

`PostgresStorage(url)` opens the process's connection pool (bot.store.postgres.database), migrates
under an advisory lock (bot.store.postgres.migrations), then opens each concern's store on the
pool. The process's other stores share its pool (`db`): bot/store/stores.py hands it to them.
"""

from __future__ import annotations

from bot.store.postgres import migrations
from bot.store.postgres.audit import PostgresAuditStore
from bot.store.postgres.connectors import PostgresConnectorStore
from bot.store.postgres.coordination import PostgresCoordination
from bot.store.postgres.database import Database
from bot.store.postgres.deliveries import PostgresDeliveryStore
from bot.store.postgres.timeline import PostgresTimelineStore


class PostgresStorage:
    def __init__(self, url: str) -> None:
        self.url = url
        self.db = Database(url)
        self.deliveries = PostgresDeliveryStore(self.db)
        self.connectors = PostgresConnectorStore(self.db)
        self.timeline = PostgresTimelineStore(self.db)
        self.audit = PostgresAuditStore(self.db)
        self.coordination = PostgresCoordination(self.db)

    async def open(self) -> None:
        """Connect (StoreUnavailable), migrate (SchemaTooNew for a newer schema), open the stores."""
        await self.db.open()
        try:
            await self.db.migrate()
            await self.deliveries.open()
        except BaseException:
            await self.db.close()
            raise

    async def close(self) -> None:
        await self.deliveries.close()
        await self.db.close()

    async def schema_version(self) -> int:
        rows = await self.db.fetch(migrations.VERSION_QUERY)
        return int(rows[0][0])
