"""Everything the server keeps, behind one interface with two backends.

- `bot.store.model`: the rows (dataclasses) and one protocol per concern — `DeliveryStore`
  (deliveries, their jobs' states, installations, the admin console's reads), `TimelineStore`
  (what each job attempt did, for the console), `ConnectorStore` (connector resources) — and
  `Storage`, which composes them and runs the migrations when it opens. `bot.store.console` holds
  the console's SQL, which both backends run.
- `bot.store.sqlite`: the embedded default, one file (`sqlite:///reviewer.db`): group commit on one
  writer, LZ4 bodies, WAL with `synchronous=FULL`.
- `bot.store.postgres`: `postgresql://user:pass@host:5432/db`, on psycopg 3 and its async pool (not
  asyncpg: its prepared statements break behind a transaction-mode PgBouncer, and the job queue,
  procrastinate, runs on psycopg 3 too, so one driver serves both).

- The other stores in the same database, each behind its caller's interface: the sign-in store
  (`bot.store.signin`, for bot/auth/store.py's `AuthStore`), the review memory (`bot.store.reviews`,
  for bot/reviews/memory.py's `ReviewMemory`), the repository index (`bot.store.index`, for
  bot/index/store.py's `IndexStore`; on SQLite a file of its own), and the job queue's statements on
  procrastinate's tables (`bot.store.postgres.jobqueue`).

Every SQL statement and every database driver (sqlite3, psycopg) of the server is in this package,
and it imports nothing above it: the standard library and the drivers (the index's shapes are its
own, bot/store/index/model.py; the learnings store keeps rows, which bot/learnings/book.py turns
into shapes). Nothing above it names a driver's error: the index's openers turn every
driver error into `StoreError` (a review catches it and goes on without the index), and the shared
pool (bot.store.postgres.database) and the review memory on PostgreSQL turn a lost connection into
`StoreUnavailable`, a `StoreError`.

`storage_for(url)` picks the backend from the URL's scheme; `bot.store.stores.stores_for(url)` builds
every store of a process around it, on PostgreSQL all on the storage's one pool. This package
imports its backends and never the reverse: they read URLs with `bot.store.urls` and migrate with
their own migrations module.

`migrate_database(url)` brings a database to the latest schema: `Storage.open` runs it, and so does every other store that keeps its
tables in the same database (the sign-in store, the review memory, the repository index on
PostgreSQL) when it opens, unless the pool it shares was migrated already (`Database.ready`), so
that a store opened alone (a CLI, a test) finds its tables, and an old release refuses a newer
schema whichever store opens first. Those stores may import this module; it imports none of them.

Adding a table (say, sign-in sessions):
1. the shape: dataclasses for its rows and a `SessionStore` protocol in `bot.store.model`, and a
   `sessions: SessionStore` attribute on `Storage`;
2. SQLite: append a migration `(N, "CREATE TABLE sessions (...)")` to
   `bot.store.sqlite.migrations.MIGRATIONS`, a module `bot/store/sqlite/sessions.py` with the class
   (blocking work on a thread, as `connectors.py` does, or on the delivery writer's group commit for
   a hot path), and build it in `SQLiteStorage.__init__`/`open`;
3. PostgreSQL: the same migration number in `bot.store.postgres.migrations.MIGRATIONS` (PostgreSQL's
   types: `bytea`, `double precision`, `bigint`, `jsonb`), a module `bot/store/postgres/sessions.py`
   whose methods take a connection from the shared pool (`Database.transaction()`), built in
   `PostgresStorage.__init__`;
4. tests: add its behaviour to tests/store/test_store_conformance.py, which runs every test against both
   backends (the `storage` fixture).
A table of another concern's store (sign-in, review memory, index) is made the same way: by a
migration here, never by the store, which calls `migrate_database` when it opens.
Never edit a released migration: add one. A process finding a higher version than it knows refuses
to start (SchemaTooNew), so an old release cannot write to a schema it does not understand.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from bot.store.model import Storage
from bot.store.urls import POSTGRES_SCHEMES, is_postgres, redact_url, url_password

__all__ = ["POSTGRES_SCHEMES", "check_url", "is_postgres", "latest_schema_version", "migrate_database",
           "migrate_database_blocking", "redact_url", "schema_version_of", "storage_for", "url_password"]


def check_url(url: str) -> None:
    """Raise ValueError naming REVIEWER_DATABASE_URL and the accepted forms for a URL no backend takes."""
    if is_postgres(url):
        parts = urlsplit(url)
        if not parts.hostname and "host=" not in (parts.query or ""):
            raise ValueError(f"REVIEWER_DATABASE_URL {redact_url(url)!r} names no host: use "
                             "postgresql://user:password@host:5432/database")
        return
    from bot.store.sqlite.database import sqlite_path
    try:
        sqlite_path(url)
    except ValueError as exc:
        raise ValueError(f"{exc}, or postgresql://user:password@host:5432/database") from None


def storage_for(url: str) -> Storage:
    """The backend for `url`, not yet opened (ValueError for a URL no backend takes)."""
    check_url(url)
    if is_postgres(url):
        from bot.store.postgres import PostgresStorage
        return PostgresStorage(url)
    from bot.store.sqlite import SQLiteStorage
    return SQLiteStorage(url)


async def migrate_database(url: str) -> int:
    """Bring the database at `url` to the latest schema, under the migrations' lock (so any number
    of processes and stores may do it at once); returns the version it had. When it returns, every
    table is committed. SchemaTooNew for a database a newer release migrated; StoreUnavailable
    when PostgreSQL cannot be reached; ValueError for a URL no backend takes."""
    return await asyncio.to_thread(migrate_database_blocking, url)


def migrate_database_blocking(url: str) -> int:
    """`migrate_database` for code that runs on a thread of its own (the index's builds)."""
    check_url(url)
    if is_postgres(url):
        from bot.store.postgres.migrations import migrate_url
        return migrate_url(url, redact_url(url))
    from bot.store.sqlite.database import sqlite_path
    from bot.store.sqlite.migrations import migrate_file
    return migrate_file(sqlite_path(url))


def latest_schema_version(url: str) -> int:
    """The schema version this release brings the database at `url` to (both backends number alike):
    a process is ready only while its database has exactly this version (`GET /readyz`)."""
    if is_postgres(url):
        from bot.store.postgres.migrations import LATEST as postgres_latest
        return postgres_latest
    from bot.store.sqlite.migrations import LATEST as sqlite_latest
    return sqlite_latest


async def schema_version_of(url: str) -> int | None:
    """The schema version of the database at `url`, changing nothing (None: no schema yet, or no
    SQLite file yet: what `serve` creates and migrates). StoreRefused when PostgreSQL refuses the
    connection (a missing database, a wrong password: the message says which) or the file is no
    SQLite database; StoreUnavailable when PostgreSQL cannot be reached. `reviewer doctor` asks it."""
    check_url(url)
    if is_postgres(url):
        from bot.store.postgres.refusals import connect_once
        return await connect_once(url)
    from bot.store.sqlite.database import sqlite_path
    from bot.store.sqlite.migrations import version_of_file
    return await asyncio.to_thread(version_of_file, sqlite_path(url))
