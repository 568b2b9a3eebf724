"""`AuthStore` on PostgreSQL: what sign-in keeps, shared by every web process of a scaled-out
deployment (a state made by one process is taken by another; a session made by one is seen by all).

The tables are those of `SqliteAuthStore`, made by the server's migrations (bot.store.postgres.
migrations, version 6): opening the store brings the database to the latest schema first
(`bot.store.migrate_database`, under the migrations' advisory lock, so processes starting together
do not race), and a database a newer release migrated is refused (SchemaTooNew). Single use is
decided by `DELETE … RETURNING`: of two callers taking the same state, one gets the row.

In the server the store is given the process's pool (a `Database`, bot/store/stores.py): opening
it then opens nothing of its own, and closing it leaves the pool to its owner, the storage. Given
a URL (a store used alone), it opens a small pool of its own and closes it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bot.store.postgres.database import Database

SIGNIN_LOG_KEEP = 10_000  # newest entries kept, as on SQLite
SIGNIN_NOISE_KEEP = 1_000  # unauthenticated failures, kept apart, as on SQLite
_NOISE = "coalesce(((body::jsonb)->>'unauthenticated')::boolean, false)"


class PostgresAuthStore:
    def __init__(self, database: str | Database, clock: Any = time.time) -> None:
        self.owns_pool = isinstance(database, str)
        self.db = Database(database, min_size=1, max_size=4) if isinstance(database, str) else database
        self.url = self.db.url
        self.clock = clock

    async def open(self) -> None:
        """Connect (StoreUnavailable), then migrate (SchemaTooNew for a newer schema); on a shared
        pool, only what its owner has not done yet."""
        if not self.owns_pool:
            await self.db.ready()
            return
        await self.db.open()
        try:
            await self.db.migrate()
        except BaseException:
            await self.db.close()
            raise

    async def close(self) -> None:
        if self.owns_pool:
            await self.db.close()

    async def put_pending(self, key: str, body: dict[str, Any], expires_at: float) -> None:
        async with self.db.transaction() as conn:
            await conn.execute("DELETE FROM auth_pending WHERE expires_at < %s", (self.clock(),))
            await conn.execute("INSERT INTO auth_pending (id, body, expires_at) VALUES (%s, %s, %s)",
                               (key, json.dumps(body), expires_at))

    async def take_pending(self, key: str) -> dict[str, Any] | None:
        rows = await self.db.fetch("DELETE FROM auth_pending WHERE id = %s RETURNING body, expires_at", (key,))
        if not rows or rows[0][1] < self.clock():
            return None
        return dict(json.loads(rows[0][0]))

    async def put_session(self, key: str, body: dict[str, Any], expires_at: float) -> None:
        async with self.db.transaction() as conn:
            await conn.execute("DELETE FROM auth_sessions WHERE expires_at < %s", (self.clock(),))
            await conn.execute("INSERT INTO auth_sessions (id, body, expires_at) VALUES (%s, %s, %s) "
                               "ON CONFLICT (id) DO UPDATE SET body = excluded.body, expires_at = excluded.expires_at",
                               (key, json.dumps(body), expires_at))

    async def get_session(self, key: str) -> dict[str, Any] | None:
        rows = await self.db.fetch("SELECT body FROM auth_sessions WHERE id = %s AND expires_at >= %s",
                                   (key, self.clock()))
        return dict(json.loads(rows[0][0])) if rows else None

    async def delete_session(self, key: str) -> bool:
        return await self.db.execute("DELETE FROM auth_sessions WHERE id = %s", (key,)) == 1

    async def sessions(self, limit: int = 1000) -> list[tuple[str, dict[str, Any]]]:
        """The sessions not expired, newest first, each with its key (the token's hash, never the token)."""
        rows = await self.db.fetch("SELECT id, body FROM auth_sessions WHERE expires_at >= %s "
                                   "ORDER BY ((body::jsonb)->>'created')::float8 DESC LIMIT %s", (self.clock(), limit))
        return [(str(row[0]), dict(json.loads(row[1]))) for row in rows]

    async def delete_connector_sessions(self, connector: str) -> int:
        """Ends every session signed in through `connector` (deleted: its sessions go with it)."""
        return int(await self.db.execute("DELETE FROM auth_sessions WHERE (body::jsonb)->>'connector' = %s",
                                         (connector,)))

    async def record_signin(self, body: dict[str, Any]) -> None:
        rows = await self.db.fetch("INSERT INTO auth_signins (at, body) VALUES (%s, %s) RETURNING seq",
                                   (body.get("at", self.clock()), json.dumps(body)))
        seq = int(rows[0][0])
        if seq % 100 == 0:  # real entries and unauthenticated noise kept apart (bot/store/signin/sqlite.py)
            for noise, keep in ((False, SIGNIN_LOG_KEEP), (True, SIGNIN_NOISE_KEEP)):
                await self.db.execute(f"DELETE FROM auth_signins WHERE seq IN (SELECT seq FROM auth_signins WHERE "
                                      f"{_NOISE} = %s ORDER BY seq DESC OFFSET %s)", (noise, keep))

    async def signins(self, limit: int = 100, unauthenticated: bool = False) -> list[dict[str, Any]]:
        rows = await self.db.fetch(f"SELECT body FROM auth_signins WHERE {_NOISE} = %s ORDER BY seq DESC LIMIT %s",
                                   (unauthenticated, limit))
        return [json.loads(row[0]) for row in rows]

    async def key(self, name: str, make: Any) -> str:
        """The value stored under `name`, made by `make()` on first use; the first writer wins, so
        every process ends up with the same key."""
        rows = await self.db.fetch("SELECT value FROM auth_keys WHERE name = %s", (name,))
        if rows:
            return str(rows[0][0])
        await self.db.execute("INSERT INTO auth_keys (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                              (name, make()))
        rows = await self.db.fetch("SELECT value FROM auth_keys WHERE name = %s", (name,))
        return str(rows[0][0])

    async def use_once(self, key: str, expires_at: float) -> bool:
        """Remembers `key` (a SAML assertion id) until `expires_at`; False when it was already used.
        The INSERT decides, so of two processes given the same assertion only one accepts it."""
        async with self.db.transaction() as conn:
            await conn.execute("DELETE FROM auth_used_ids WHERE expires_at < %s", (self.clock(),))
            cursor = await conn.execute("INSERT INTO auth_used_ids (id, expires_at) VALUES (%s, %s) "
                                        "ON CONFLICT (id) DO NOTHING", (key, expires_at))
            return cursor.rowcount == 1

    async def put_sso_index(self, session: str, connector: str, name_id: str, body: dict[str, Any],
                            expires_at: float) -> None:
        """What SAML single logout needs of a session (its NameID and SessionIndex), by session key."""
        async with self.db.transaction() as conn:
            await conn.execute("DELETE FROM auth_sso_index WHERE expires_at < %s", (self.clock(),))
            await conn.execute("INSERT INTO auth_sso_index (session, connector, name_id, body, expires_at) "
                               "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (session) DO UPDATE SET "
                               "connector = excluded.connector, name_id = excluded.name_id, body = excluded.body, "
                               "expires_at = excluded.expires_at",
                               (session, connector, name_id, json.dumps(body), expires_at))

    async def get_sso_index(self, session: str) -> dict[str, Any] | None:
        rows = await self.db.fetch("SELECT body FROM auth_sso_index WHERE session = %s", (session,))
        return dict(json.loads(rows[0][0])) if rows else None

    async def take_sso_sessions(self, connector: str, name_id: str) -> list[tuple[str, dict[str, Any]]]:
        """Removes and returns (session key, body) of every session of that NameID at that connector."""
        rows = await self.db.fetch("DELETE FROM auth_sso_index WHERE connector = %s AND name_id = %s "
                                   "RETURNING session, body", (connector, name_id))
        return [(str(row[0]), json.loads(row[1])) for row in rows]
