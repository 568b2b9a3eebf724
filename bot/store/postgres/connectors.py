"""Connector objects in PostgreSQL: the ConnectorStore of bot.store.model.

A write takes the counters row's lock first (`SELECT ... FOR UPDATE`), so writers are serialised
as by SQLite's IMMEDIATE transaction: the read, the compare and the write cannot interleave with
another writer's, in this process or another.
"""

from __future__ import annotations

import json

import psycopg

from bot.store.model import Build, Conflict
from bot.store.postgres.database import Database


class PostgresConnectorStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, kind: str, name: str) -> dict | None:
        rows = await self.db.fetch("SELECT body FROM connector_resources WHERE kind = %s AND name = %s", (kind, name))
        return json.loads(rows[0][0]) if rows else None

    async def list(self, kind: str) -> tuple[list[dict], str]:
        """Every object of a kind, by name, and the store's current resourceVersion (one snapshot)."""
        async with self.db.transaction() as conn:
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = await conn.execute("SELECT body FROM connector_resources WHERE kind = %s ORDER BY name", (kind,))
            rows = await cursor.fetchall()
            version = await _counter(conn, "resourceVersion")
        return [json.loads(r[0]) for r in rows], str(version)

    async def put(self, kind: str, name: str, expected_version: str | None, build: Build) -> tuple[dict, bool]:
        async with self.db.transaction() as conn:
            await _lock(conn)
            cursor = await conn.execute(
                "SELECT resource_version, body FROM connector_resources WHERE kind = %s AND name = %s", (kind, name))
            row = await cursor.fetchone()
            current = str(row[0]) if row else None
            if expected_version is not None and expected_version != current:
                raise Conflict()
            previous = json.loads(row[1]) if row else None
            obj = build(previous)
            version = await _next(conn, "resourceVersion")
            obj["metadata"]["resourceVersion"] = str(version)
            if previous is None:
                obj["status"]["serviceResourceID"] = await _next(conn, "serviceResourceID")
                await conn.execute(
                    "INSERT INTO connector_resources (kind, name, resource_version, body) VALUES (%s, %s, %s, %s)",
                    (kind, name, version, json.dumps(obj)))
            else:
                await conn.execute(
                    "UPDATE connector_resources SET resource_version = %s, body = %s WHERE kind = %s AND name = %s",
                    (version, json.dumps(obj), kind, name))
        return obj, previous is None

    async def delete(self, kind: str, name: str) -> dict | None:
        async with self.db.transaction() as conn:
            await _lock(conn)
            cursor = await conn.execute(
                "DELETE FROM connector_resources WHERE kind = %s AND name = %s RETURNING body", (kind, name))
            row = await cursor.fetchone()
            if row is None:
                return None
            await _next(conn, "resourceVersion")  # a deletion is a change a lister should see
        return json.loads(row[0])


async def _lock(conn: psycopg.AsyncConnection) -> None:
    """Serialise writers on the resourceVersion counter's row (created on first use)."""
    await conn.execute("INSERT INTO connector_counters (name, value) VALUES ('resourceVersion', 0) "
                       "ON CONFLICT (name) DO NOTHING")
    await conn.execute("SELECT value FROM connector_counters WHERE name = 'resourceVersion' FOR UPDATE")


async def _counter(conn: psycopg.AsyncConnection, name: str) -> int:
    cursor = await conn.execute("SELECT value FROM connector_counters WHERE name = %s", (name,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def _next(conn: psycopg.AsyncConnection, name: str) -> int:
    cursor = await conn.execute(
        "INSERT INTO connector_counters (name, value) VALUES (%s, 1) "
        "ON CONFLICT (name) DO UPDATE SET value = connector_counters.value + 1 RETURNING value", (name,))
    row = await cursor.fetchone()
    assert row is not None  # RETURNING of an upsert always yields its row
    return int(row[0])
