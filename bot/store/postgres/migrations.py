"""The PostgreSQL schema, versioned like SQLite's (same numbers, same meaning).

Migrations run at start in one transaction holding a transaction-level advisory lock: any number of
processes may start at once; the first migrates, the others wait for its commit and find nothing
left to do. A database migrated by a newer release is refused (SchemaTooNew) before anything runs.

The job queue's tables (procrastinate's own schema, for the version pinned in pyproject.toml) are
created in the same transaction, under the same lock, when absent.
"""

from __future__ import annotations

import psycopg
from procrastinate.schema import SchemaManager

from bot.store.model import SchemaTooNew

LOCK_KEY = 0x52455649  # "REVI": the advisory lock that serialises migrations

SCHEMA_1 = """
CREATE TABLE IF NOT EXISTS deliveries (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BYTEA NOT NULL,
    received_at DOUBLE PRECISION NOT NULL,
    received_count INTEGER NOT NULL DEFAULT 1,
    state TEXT NOT NULL,
    action TEXT,
    installation_id BIGINT,
    repo TEXT,
    pr_number INTEGER,
    head_sha TEXT,
    job_key TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    started_at DOUBLE PRECISION,
    finished_at DOUBLE PRECISION
);
CREATE INDEX IF NOT EXISTS deliveries_open ON deliveries(state, seq)
    WHERE state IN ('received', 'queued', 'running');
CREATE INDEX IF NOT EXISTS deliveries_received_at ON deliveries(received_at);
CREATE TABLE IF NOT EXISTS installations (
    id BIGINT PRIMARY KEY,
    account TEXT,
    last_action TEXT,
    deleted BOOLEAN NOT NULL DEFAULT false,
    repositories JSONB NOT NULL DEFAULT '[]',
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS connector_resources (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    resource_version BIGINT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, name)
);
CREATE TABLE IF NOT EXISTS connector_counters (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
)
"""

# 2: what GitHub clients share across processes (bot.store.postgres.coordination)
SCHEMA_2 = """
CREATE TABLE IF NOT EXISTS installation_tokens (
    installation_id BIGINT PRIMARY KEY,
    sealed BYTEA NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS github_holds (
    installation_id BIGINT PRIMARY KEY,
    until DOUBLE PRECISION NOT NULL
)
"""

# 3: the admin console's delivery timeline (bot.store.postgres.timeline)
SCHEMA_3 = """
CREATE TABLE IF NOT EXISTS delivery_timeline (
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    body JSONB NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
)
"""

# 4: a pull request's queued deliveries found by their key (`queued(key)`, once per job and per
# pass of its loop) instead of by reading every queued row, which made a backlog quadratic
SCHEMA_4 = "CREATE INDEX IF NOT EXISTS deliveries_queued_key ON deliveries(job_key, seq) WHERE state = 'queued'"

# 5: when the dispatcher last queued a delivery (`queued_at`, set with its classification or by a
# recovery), for the console's timeline; rows from before it keep NULL.
SCHEMA_5 = "ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS queued_at DOUBLE PRECISION"

MIGRATIONS: list[tuple[int, str]] = [
    (1, SCHEMA_1),
    (2, SCHEMA_2),
    (3, SCHEMA_3),
    (4, SCHEMA_4),
    (5, SCHEMA_5),
]
LATEST = MIGRATIONS[-1][0]


async def migrate(conn: psycopg.AsyncConnection, where: str) -> int:
    """Bring the database to LATEST under the advisory lock; returns the version it had."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        await conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        found = await current_version(conn)
        if found > LATEST:
            raise SchemaTooNew(found, LATEST, where)
        for version, script in MIGRATIONS:
            if version > found:
                for statement in filter(str.strip, script.split(";")):
                    await conn.execute(statement)
                await conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
        cursor = await conn.execute("SELECT to_regclass('procrastinate_jobs') IS NULL")
        row = await cursor.fetchone()
        if row and row[0]:
            await conn.execute(SchemaManager.get_schema())
    return found


async def current_version(conn: psycopg.AsyncConnection) -> int:
    cursor = await conn.execute("SELECT coalesce(max(version), 0) FROM schema_version")
    row = await cursor.fetchone()
    return int(row[0]) if row else 0
