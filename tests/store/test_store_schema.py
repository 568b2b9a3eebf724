"""One versioned schema for everything the server keeps, on both backends (the `empty_database_url`
fixture): the sign-in store, the review memory and (on PostgreSQL) the repository index make no
tables of their own, but migrate the database through bot.store when they open. So any one of them
opened alone gets every table; a database from the release before migration 6, where they had made
their tables themselves, keeps its rows; a newer schema is refused by each; and several opening at
once do not race. (On SQLite the index has a file of its own, not the server's database: see
bot.index.store.)"""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from bot.auth.store import auth_store_for
from bot.pipeline.index import RepositoryIndexes
from bot.reviews.fingerprints import PostedFinding
from bot.store import is_postgres, storage_for
from bot.store.index import postgres_stores
from bot.store.index.postgres import PostgresIndex, connect_pg
from bot.store.model import SchemaTooNew, StoreUnavailable
from bot.store.postgres import migrations as pg_migrations
from bot.store.reviews import review_memory_for as review_memory
from bot.store.sqlite import migrations as sqlite_migrations
from bot.store.sqlite.database import sqlite_path
from tests.support.postgres_support import fresh_database
from tests.support.process_support import env

PULL, REPO = "octo/app#1", "octo/app"
FAR = 4_000_000_000.0  # an expiry far ahead


async def _open_storage(url: str) -> None:
    storage = storage_for(url)
    await storage.open()
    await storage.close()


async def _open_sign_in(url: str) -> None:
    store = auth_store_for(url)
    await store.open()
    await store.close()


async def _open_memory(url: str) -> None:
    await review_memory(url).paused_by(PULL)  # a memory's first call is its open


async def _open_index(url: str) -> None:
    await RepositoryIndexes(postgres_stores(url)).commit(REPO)  # the server's opener, at its first use


OPENERS: dict[str, Callable[[str], Awaitable[None]]] = {
    "storage": _open_storage, "sign-in": _open_sign_in, "memory": _open_memory, "index": _open_index}
STORES = [("sqlite", "sign-in"), ("sqlite", "memory"),
          ("postgres", "sign-in"), ("postgres", "memory"), ("postgres", "index")]
ONE_STORE = pytest.mark.parametrize("empty_database_url, store", STORES, indirect=["empty_database_url"],
                                    ids=[f"{backend}-{store}" for backend, store in STORES])

SIX_SQLITE = {"auth_pending", "auth_sessions", "auth_signins", "auth_keys", "auth_used_ids", "auth_sso_index",
              "review_heads", "review_findings", "review_pauses", "followup_comments", "followup_answers"}
SIX_POSTGRES = SIX_SQLITE | {"index_repos", "index_files", "index_defs", "index_refs"}
BEFORE_SIX = {"schema_version", "deliveries", "installations", "connector_resources", "connector_counters",
              "delivery_timeline"}
SEVEN = {"job_journal"}  # the jobs' journal (bot.pipeline.journal)
NINE = {"sarif_uploads"}  # SARIF uploads waiting for their pull request (bot/store/uploads.py)
TWELVE = {"audit_log"}  # the audit log (bot.audit.log)
# The versions of this release, in order.
RELEASED = list(range(1, 14))
POSTGRES_ONLY = {"installation_tokens", "github_holds", "procrastinate_jobs"}
POSTGRES_INDEXES = {"auth_sso_index_name", "followup_answers_thread", "index_files_words", "index_files_trigrams",
                    "index_defs_name", "index_defs_file", "index_refs_name"}


def _latest(url: str) -> int:
    return pg_migrations.LATEST if is_postgres(url) else sqlite_migrations.LATEST


def _known(url: str) -> list[int]:
    """The versions this release's migrations bring a database to, in order."""
    return [v for v, _ in (pg_migrations if is_postgres(url) else sqlite_migrations).MIGRATIONS]


def _sql(url: str, statement: str, params: tuple = ()) -> list[tuple]:
    """One statement on a connection of the test's own, committed (`?` placeholders on both)."""
    if is_postgres(url):
        with psycopg.connect(url, autocommit=True) as pg:
            cursor = pg.execute(statement.replace("?", "%s"), params or None)
            return cursor.fetchall() if cursor.description else []
    conn = sqlite3.connect(sqlite_path(url))
    try:
        with conn:
            return conn.execute(statement, params).fetchall()
    finally:
        conn.close()


def _tables(url: str) -> set[str]:
    if is_postgres(url):
        rows = _sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    else:
        rows = _sql(url, "SELECT name FROM sqlite_master WHERE type = 'table'")
    return {row[0] for row in rows}


def _versions(url: str) -> list[int]:
    return [row[0] for row in _sql(url, "SELECT version FROM schema_version ORDER BY version")]


# --- (a) a store opened alone on a fresh database gets every table ------------------------------

@ONE_STORE
async def test_a_store_opened_alone_gets_every_table_at_the_latest_version(empty_database_url: str, store: str):
    await OPENERS[store](empty_database_url)
    tables = _tables(empty_database_url)
    if is_postgres(empty_database_url):
        assert BEFORE_SIX | SIX_POSTGRES | SEVEN | NINE | TWELVE | POSTGRES_ONLY <= tables
        indexes = {row[0] for row in _sql(empty_database_url, "SELECT indexname FROM pg_indexes WHERE schemaname = 'public'")}
        assert POSTGRES_INDEXES <= indexes
        assert _sql(empty_database_url, "SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'") == [("pg_trgm",)]
    else:
        assert BEFORE_SIX | SIX_SQLITE | SEVEN | NINE | TWELVE <= tables
        assert not {"index_files", "index_search"} & tables  # the SQLite index keeps its own file
    assert {"learnings", "finding_outcomes"} <= tables  # 10: learnings and the findings' outcomes
    assert _versions(empty_database_url) == _known(empty_database_url) == RELEASED and _latest(empty_database_url) == RELEASED[-1]
    storage = storage_for(empty_database_url)  # the server starting afterwards finds nothing left to do
    await storage.open()
    try:
        assert await storage.schema_version() == _latest(empty_database_url)
    finally:
        await storage.close()


# --- (b) a database of the previous release keeps its rows ---------------------------------------

# What the release before migration 6 ran for its stores, verbatim (bot/auth/store.py and pgstore.py,
# bot/reviews/memory.py, bot/index/pgstore.py), and nothing recorded in schema_version.
PREVIOUS_SQLITE = [
    "CREATE TABLE IF NOT EXISTS auth_pending (id TEXT PRIMARY KEY, body TEXT NOT NULL, expires_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_sessions (id TEXT PRIMARY KEY, body TEXT NOT NULL, expires_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_signins (seq INTEGER PRIMARY KEY, at REAL NOT NULL, body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_used_ids (id TEXT PRIMARY KEY, expires_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_sso_index (session TEXT PRIMARY KEY, connector TEXT NOT NULL, "
    "name_id TEXT NOT NULL, body TEXT NOT NULL, expires_at REAL NOT NULL)",
]
PREVIOUS_POSTGRES = [
    "CREATE TABLE IF NOT EXISTS auth_pending (id text PRIMARY KEY, body text NOT NULL, "
    "expires_at double precision NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_sessions (id text PRIMARY KEY, body text NOT NULL, "
    "expires_at double precision NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_signins (seq bigserial PRIMARY KEY, at double precision NOT NULL, "
    "body text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_keys (name text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_used_ids (id text PRIMARY KEY, expires_at double precision NOT NULL)",
    "CREATE TABLE IF NOT EXISTS auth_sso_index (session text PRIMARY KEY, connector text NOT NULL, "
    "name_id text NOT NULL, body text NOT NULL, expires_at double precision NOT NULL)",
    "CREATE INDEX IF NOT EXISTS auth_sso_index_name ON auth_sso_index (connector, name_id)",
    """CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE IF NOT EXISTS index_repos (
    repo TEXT PRIMARY KEY, commit_sha TEXT NOT NULL, report JSONB NOT NULL);
CREATE TABLE IF NOT EXISTS index_files (
    id BIGSERIAL PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, blob TEXT NOT NULL,
    size INTEGER NOT NULL, language TEXT, body TEXT NOT NULL,
    words TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', left(body, 1000000))) STORED,
    UNIQUE (repo, path));
CREATE INDEX IF NOT EXISTS index_files_words ON index_files USING GIN (words);
CREATE INDEX IF NOT EXISTS index_files_trigrams ON index_files USING GIN (body gin_trgm_ops);
CREATE TABLE IF NOT EXISTS index_defs (
    file_id BIGINT NOT NULL REFERENCES index_files (id) ON DELETE CASCADE, name TEXT NOT NULL,
    kind TEXT NOT NULL, scope TEXT NOT NULL, signature TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS index_defs_name ON index_defs (name);
CREATE INDEX IF NOT EXISTS index_defs_file ON index_defs (file_id);
CREATE TABLE IF NOT EXISTS index_refs (
    file_id BIGINT NOT NULL REFERENCES index_files (id) ON DELETE CASCADE, name TEXT NOT NULL,
    lines INTEGER[] NOT NULL, PRIMARY KEY (file_id, name));
CREATE INDEX IF NOT EXISTS index_refs_name ON index_refs (name);
""",
]
PREVIOUS_MEMORY = """
CREATE TABLE IF NOT EXISTS review_heads (
    pull TEXT PRIMARY KEY,
    head_sha TEXT NOT NULL,
    plan_digest TEXT NOT NULL,
    merge_base TEXT NOT NULL,
    report TEXT NOT NULL,
    reviewed_at {float} NOT NULL
);
CREATE TABLE IF NOT EXISTS review_findings (
    pull TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    path TEXT NOT NULL,
    severity TEXT NOT NULL,
    category TEXT NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    head_sha TEXT NOT NULL,
    posted_at {float} NOT NULL,
    PRIMARY KEY (pull, fingerprint)
);
CREATE TABLE IF NOT EXISTS review_pauses (
    pull TEXT PRIMARY KEY,
    paused_by TEXT NOT NULL,
    paused_at {float} NOT NULL
);
CREATE TABLE IF NOT EXISTS followup_comments (
    comment_key TEXT PRIMARY KEY,
    pull TEXT NOT NULL,
    seen_at {float} NOT NULL,
    claimed_by TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS followup_answers (
    thread TEXT NOT NULL,
    kind TEXT NOT NULL,
    answered_at {float} NOT NULL
);
CREATE INDEX IF NOT EXISTS followup_answers_thread ON followup_answers (thread, answered_at);
"""
PRICING = "def apply_discount(total, rate):\n    return total * (1 - rate)\n"
FINDING = PostedFinding("f1", "src/pricing.py", "blocking", "bug", "return total", "Rounds down.", "a" * 40)


async def _previous_release(url: str) -> None:
    """A database at version 5 whose sign-in, memory and index tables the previous release made on
    its own, holding a session, a finding and an indexed file, as that release wrote them."""
    await _open_storage(url)  # today's release: every table, version 6
    made_by_six = SIX_POSTGRES if is_postgres(url) else SIX_SQLITE
    for table in sorted(made_by_six):
        _sql(url, f"DROP TABLE {table}" + (" CASCADE" if is_postgres(url) else ""))
    _sql(url, "DELETE FROM schema_version WHERE version >= 6")
    for column in ("review_outcome", "review_reason", "traceparent"):  # what migrations 8 and 11 add to deliveries
        _sql(url, f"ALTER TABLE deliveries DROP COLUMN {column}")
    _sql(url, "DROP TABLE budget_usage")  # migration 11's
    if is_postgres(url):
        statements = [*PREVIOUS_POSTGRES, PREVIOUS_MEMORY.format(float="DOUBLE PRECISION")]
    else:
        statements = [*PREVIOUS_SQLITE, PREVIOUS_MEMORY.format(float="REAL")]
    for script in statements:
        for statement in filter(str.strip, script.split(";")):
            _sql(url, statement)
    _sql(url, "INSERT INTO auth_sessions (id, body, expires_at) VALUES (?, ?, ?)",
         ("session-key", '{"username": "ann", "connector": "okta"}', FAR))
    _sql(url, "INSERT INTO review_findings (pull, fingerprint, path, severity, category, code, message, head_sha, "
         "posted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
         (PULL, FINDING.fingerprint, FINDING.path, FINDING.severity, FINDING.category, FINDING.code,
          FINDING.message, FINDING.head_sha, 1000.0))
    if is_postgres(url):
        file_id = _sql(url, "INSERT INTO index_files (repo, path, blob, size, language, body) "
                       "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                       (REPO, "src/pricing.py", "b" * 40, len(PRICING), "python", PRICING))[0][0]
        _sql(url, "INSERT INTO index_defs VALUES (?, ?, ?, ?, ?, ?, ?)",
             (file_id, "apply_discount", "function", "", "def apply_discount(total, rate)", 1, 2))
        _sql(url, "INSERT INTO index_repos VALUES (?, ?, ?)", (REPO, "c" * 40, "{}"))
    assert _versions(url) == [1, 2, 3, 4, 5]


STARTS = [("sqlite", "storage"), *STORES[:2], ("postgres", "storage"), *STORES[2:]]


@pytest.mark.parametrize("empty_database_url, store", STARTS, indirect=["empty_database_url"],
                         ids=[f"{backend}-{store}" for backend, store in STARTS])
async def test_a_database_of_the_previous_release_migrates_to_6_keeping_its_rows(empty_database_url: str, store: str):
    """Whichever store opens it first migrates it; every store then reads what it held."""
    await _previous_release(empty_database_url)
    await OPENERS[store](empty_database_url)
    assert _versions(empty_database_url) == _known(empty_database_url) == RELEASED
    sign_in = auth_store_for(empty_database_url)
    await sign_in.open()
    try:
        assert await sign_in.get_session("session-key") == {"username": "ann", "connector": "okta"}
        assert await sign_in.delete_connector_sessions("okta") == 1
    finally:
        await sign_in.close()
    assert await review_memory(empty_database_url).posted(PULL) == [FINDING]
    if is_postgres(empty_database_url):
        indexes = RepositoryIndexes(postgres_stores(empty_database_url))
        assert await indexes.commit(REPO) == "c" * 40
        with connect_pg(empty_database_url, schema=False) as conn:
            index = PostgresIndex(conn, REPO)
            assert index.text("src/pricing.py") == PRICING
            assert index.search(["apply_discount"], 5) == ["src/pricing.py"]  # the generated words, indexed
            assert [d.path for d in index.definitions(["apply_discount"], 5)] == ["src/pricing.py"]


# --- (c) a newer schema is refused by each store ---------------------------------------------------

@ONE_STORE
async def test_a_newer_schema_is_refused_by_each_store(empty_database_url: str, store: str):
    await _open_storage(empty_database_url)
    newer = _latest(empty_database_url) + 1
    _sql(empty_database_url, "INSERT INTO schema_version (version) VALUES (?)", (newer,))
    with pytest.raises(SchemaTooNew, match=rf"schema version {newer}, newer than this version of Reviewer knows "
                                           rf"\({newer - 1}\): upgrade Reviewer"):
        await OPENERS[store](empty_database_url)
    assert _versions(empty_database_url)[-1] == newer  # nothing was migrated back or written over


async def test_the_index_connection_refuses_a_newer_schema(pg_url: str):
    await _open_storage(pg_url)
    _sql(pg_url, "INSERT INTO schema_version (version) VALUES (?)", (pg_migrations.LATEST + 1,))
    with pytest.raises(SchemaTooNew, match="newer than this version of Reviewer knows"):
        connect_pg(pg_url)


# --- (d) several opening at once ------------------------------------------------------------------

async def test_every_store_opening_at_once_on_a_fresh_database_migrates_it_once(empty_database_url: str):
    """Two of each store (two processes' worth), all opening together on a fresh database: the
    migrations run one at a time under their lock, each applied once, and every open succeeds."""
    names = ["storage", "sign-in", "memory"] + (["index"] if is_postgres(empty_database_url) else [])
    await asyncio.gather(*(OPENERS[name](empty_database_url) for name in names * 2))
    assert _versions(empty_database_url) == _known(empty_database_url)
    memory = review_memory(empty_database_url)
    await memory.add_posted(PULL, [FINDING])
    assert await memory.posted(PULL) == [FINDING]


async def test_an_unreachable_database_at_the_first_open_is_store_unavailable():
    """What the stores' callers catch: a review goes on without the index, as it did when the index
    made its own tables and psycopg's error came out (bot.pipeline.review)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again below: nothing listens there
    url = f"postgresql://reviewer:secret-password@127.0.0.1:{port}/reviewer"
    for store in ("memory", "index"):
        with pytest.raises(StoreUnavailable) as raised:
            await OPENERS[store](url)
        assert "secret-password" not in str(raised.value)


def test_a_role_that_may_not_create_pg_trgm_gets_one_line_naming_the_migration(postgres_server: str, tmp_path,
                                                                                 app_private_key: str):
    """`reviewer serve` on a database whose role may make tables but not the index's extension: it
    stops at start with the migration, the statement and what to do, and keeps nothing of it."""
    role = f"reviewer_limited_{uuid.uuid4().hex[:8]}"
    with fresh_database(postgres_server) as admin_url:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE ROLE "{role}" LOGIN')
            conn.execute(f'GRANT CREATE, USAGE ON SCHEMA public TO "{role}"')  # tables yes, extensions no
        try:
            parts = urlsplit(admin_url)
            url = urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port or 5432}"))  # trust auth
            result = subprocess.run([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, capture_output=True,
                                    text=True, timeout=120,
                                    env=env(GITHUB_WEBHOOK_SECRET="s", GITHUB_APP_ID="1",
                                             GITHUB_PRIVATE_KEY=app_private_key, REVIEWER_DATABASE_URL=url))
            assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
            said = [line for line in result.stderr.splitlines() if "error:" in line]
            assert len(said) == 1 and "migration 6 failed at `CREATE EXTENSION IF NOT EXISTS pg_trgm`" in said[0]
            assert "`CREATE EXTENSION pg_trgm` in this database once" in said[0]
            with psycopg.connect(admin_url) as conn:  # one transaction: nothing of the schema is kept
                assert conn.execute("SELECT to_regclass('deliveries') IS NULL").fetchone() == (True,)
        finally:
            with psycopg.connect(postgres_server, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{admin_url.rsplit("/", 1)[1]}" WITH (FORCE)')
                conn.execute(f'DROP ROLE IF EXISTS "{role}"')
