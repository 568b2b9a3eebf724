"""The SQLite schema, versioned: each migration runs once, in order, recorded in `schema_version`.

Version 1 is the schema every earlier release made with `CREATE ... IF NOT EXISTS`, so a file from
before versioning is taken up as it is. Migrations run inside one `BEGIN IMMEDIATE` transaction,
which takes the file's write lock: two processes starting at once migrate one after the other, and
the second finds nothing left to do. A file migrated by a newer release is refused (SchemaTooNew).
"""

from __future__ import annotations

import sqlite3

from bot.store.model import SchemaTooNew

DELIVERIES = """
CREATE TABLE IF NOT EXISTS deliveries (
    seq INTEGER PRIMARY KEY,
    delivery_id TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    received_at REAL NOT NULL,
    received_count INTEGER NOT NULL DEFAULT 1,
    state TEXT NOT NULL,
    action TEXT,
    installation_id INTEGER,
    repo TEXT,
    pr_number INTEGER,
    head_sha TEXT,
    job_key TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    started_at REAL,
    finished_at REAL
);
CREATE INDEX IF NOT EXISTS deliveries_open ON deliveries(state, seq)
    WHERE state IN ('received', 'queued', 'running');
CREATE INDEX IF NOT EXISTS deliveries_received_at ON deliveries(received_at);
CREATE TABLE IF NOT EXISTS installations (
    id INTEGER PRIMARY KEY,
    account TEXT,
    last_action TEXT,
    deleted INTEGER NOT NULL DEFAULT 0,
    repositories TEXT NOT NULL DEFAULT '[]',
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS connector_resources (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    resource_version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (kind, name)
);
CREATE TABLE IF NOT EXISTS connector_counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
)
"""

TIMELINE = """
CREATE TABLE IF NOT EXISTS delivery_timeline (
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (delivery_id, attempt)
)
"""

# (version, statements separated by `;`), in order; append, never edit a released one.
# 2: PostgreSQL's tables for what processes share about GitHub; one SQLite process keeps that in
# memory (bot.github.coordination.LocalCoordination), so here the number is kept and nothing made.
# 3: the admin console's delivery timeline (bot.store.sqlite.timeline); IF NOT EXISTS takes up the
# table a pre-release console made on its own.
# 4: a pull request's queued deliveries found by their key (a worker's `queued(key)`), not by
# reading every queued row.
# 5: when the dispatcher last queued a delivery (`queued_at`, set with its classification or by a
# recovery), for the console's timeline; rows from before it keep NULL.
QUEUED_BY_KEY = "CREATE INDEX IF NOT EXISTS deliveries_queued_key ON deliveries(job_key, seq) WHERE state = 'queued'"
MIGRATIONS: list[tuple[int, str]] = [
    (1, DELIVERIES),
    (2, ""),
    (3, TIMELINE),
    (4, QUEUED_BY_KEY),
    (5, "ALTER TABLE deliveries ADD COLUMN queued_at REAL"),
]
LATEST = MIGRATIONS[-1][0]


def migrate(conn: sqlite3.Connection, where: str) -> int:
    """Bring the file to LATEST; returns the version it had. `conn` is in autocommit mode."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        found = current_version(conn)
        if found > LATEST:
            raise SchemaTooNew(found, LATEST, where)
        for version, script in MIGRATIONS:
            if version > found:
                for statement in filter(str.strip, script.split(";")):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return found


def current_version(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0]
