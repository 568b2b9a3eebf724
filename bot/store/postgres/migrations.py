"""The PostgreSQL schema, versioned like SQLite's (same numbers, same meaning): every table the
server keeps in the database, the sign-in store's, the review memory's and the repository index's
included (migration 6).

Migrations run in one transaction holding a transaction-level advisory lock: any number of
processes may start at once; the first migrates, the others wait for its commit and find nothing
left to do. A database migrated by a newer release is refused (SchemaTooNew) before anything runs.
They run when the storage opens, and when any store on the same database opens alone
(`bot.store.migrate_database`): a store never finds a table not yet committed.

The job queue's tables (procrastinate's own schema, for the version pinned in pyproject.toml) are
created in the same transaction, under the same lock, when absent.

The migrations run on a connection of their own, outside the pool (`migrate_url`), as blocking
calls: the sign-in store and the storage call them on a thread, the index's builds from theirs.
"""

from __future__ import annotations

import psycopg
from procrastinate.schema import SchemaManager

from bot.store.model import MigrationFailed, SchemaTooNew, StoreUnavailable

CONNECT_TIMEOUT = 10  # seconds to wait for the migrations' connection

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

# 6: the tables three stores used to make on their own, each with CREATE ... IF NOT EXISTS under an
# advisory lock of its own and no version: the sign-in store's (bot.store.signin.postgres), the review
# memory's (bot.store.reviews) and the repository index's (bot.store.index.postgres, with pg_trgm). The
# statements are theirs verbatim, so a database where they already made them is taken up as it is.
SCHEMA_6 = """
CREATE TABLE IF NOT EXISTS auth_pending (id text PRIMARY KEY, body text NOT NULL,
    expires_at double precision NOT NULL);
CREATE TABLE IF NOT EXISTS auth_sessions (id text PRIMARY KEY, body text NOT NULL,
    expires_at double precision NOT NULL);
CREATE TABLE IF NOT EXISTS auth_signins (seq bigserial PRIMARY KEY, at double precision NOT NULL,
    body text NOT NULL);
CREATE TABLE IF NOT EXISTS auth_keys (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS auth_used_ids (id text PRIMARY KEY, expires_at double precision NOT NULL);
CREATE TABLE IF NOT EXISTS auth_sso_index (session text PRIMARY KEY, connector text NOT NULL,
    name_id text NOT NULL, body text NOT NULL, expires_at double precision NOT NULL);
CREATE INDEX IF NOT EXISTS auth_sso_index_name ON auth_sso_index (connector, name_id);
CREATE TABLE IF NOT EXISTS review_heads (
    pull TEXT PRIMARY KEY,
    head_sha TEXT NOT NULL,
    plan_digest TEXT NOT NULL,
    merge_base TEXT NOT NULL,
    report TEXT NOT NULL,
    reviewed_at DOUBLE PRECISION NOT NULL
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
    posted_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (pull, fingerprint)
);
CREATE TABLE IF NOT EXISTS review_pauses (
    pull TEXT PRIMARY KEY,
    paused_by TEXT NOT NULL,
    paused_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS followup_comments (
    comment_key TEXT PRIMARY KEY,
    pull TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL,
    claimed_by TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS followup_answers (
    thread TEXT NOT NULL,
    kind TEXT NOT NULL,
    answered_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS followup_answers_thread ON followup_answers (thread, answered_at);
CREATE EXTENSION IF NOT EXISTS pg_trgm;
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
CREATE INDEX IF NOT EXISTS index_refs_name ON index_refs (name)
"""

# 7: a job's journal (bot.pipeline.journal), as on SQLite.
SCHEMA_7 = ("CREATE TABLE IF NOT EXISTS job_journal (delivery_id TEXT PRIMARY KEY, body TEXT NOT NULL, "
            "recorded_at DOUBLE PRECISION NOT NULL)")

# 8: what a delivery's review came to, beside its job's state (bot.store.model.ReviewResult); rows from
# before it keep NULL.
SCHEMA_8 = """
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS review_outcome TEXT;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS review_reason TEXT
"""

# 9: analyzer results uploaded as SARIF (bot/store/uploads.py), as on SQLite.
SCHEMA_9 = """
CREATE TABLE IF NOT EXISTS sarif_uploads (
    id TEXT PRIMARY KEY,
    repo TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    ref TEXT NOT NULL,
    pull_number INTEGER,
    tool_name TEXT,
    results TEXT NOT NULL,
    status TEXT NOT NULL,
    errors TEXT NOT NULL DEFAULT '[]',
    received_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS sarif_uploads_head ON sarif_uploads(repo, commit_sha);
CREATE INDEX IF NOT EXISTS sarif_uploads_received_at ON sarif_uploads(received_at)
"""

# 11: the trace a delivery's job continues (bot.telemetry), and what each account spent of its
# budgets (bot.store.budgets): reviews per UTC day, tokens per calendar month, one row per period.
SCHEMA_11 = """
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS traceparent TEXT;
CREATE TABLE IF NOT EXISTS budget_usage (
    account TEXT NOT NULL,
    period TEXT NOT NULL,
    reviews BIGINT NOT NULL DEFAULT 0,
    tokens BIGINT NOT NULL DEFAULT 0,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (account, period)
)
"""

# 10: learnings and the outcomes of posted findings (bot.store.learnings), as on SQLite.
SCHEMA_10 = """
CREATE TABLE IF NOT EXISTS learnings (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    repository TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS learnings_scope ON learnings (account, repository, created_at);
CREATE TABLE IF NOT EXISTS finding_outcomes (
    pull TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    account TEXT NOT NULL,
    repository TEXT NOT NULL,
    comment_id BIGINT,
    state TEXT NOT NULL,
    posted_at DOUBLE PRECISION NOT NULL,
    decided_at DOUBLE PRECISION,
    body TEXT NOT NULL,
    PRIMARY KEY (pull, fingerprint)
);
CREATE INDEX IF NOT EXISTS finding_outcomes_comment ON finding_outcomes (comment_id);
CREATE INDEX IF NOT EXISTS finding_outcomes_posted ON finding_outcomes (account, repository, posted_at)
"""

# 12: the audit log (bot.audit.log, bot.store.postgres.audit), as on SQLite. (9 to 11 are other tables
# of the same release.)
SCHEMA_12 = """
CREATE TABLE IF NOT EXISTS audit_log (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL,
    actor TEXT NOT NULL,
    ip TEXT,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    account TEXT,
    details JSONB NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log(at)
"""

# 13: what each posted finding came from and where it was (bot/reviews/ledger.py): its source, an
# analyzer's rule id and its lines at the head it was posted at, so that an upload never posts again
# what some source posted at the same path, overlapping lines and rule id.
SCHEMA_13 = """
ALTER TABLE review_findings ADD COLUMN IF NOT EXISTS source TEXT NOT NULL DEFAULT 'model';
ALTER TABLE review_findings ADD COLUMN IF NOT EXISTS rule TEXT;
ALTER TABLE review_findings ADD COLUMN IF NOT EXISTS start_line INTEGER NOT NULL DEFAULT 0;
ALTER TABLE review_findings ADD COLUMN IF NOT EXISTS end_line INTEGER NOT NULL DEFAULT 0
"""

# (version, statements separated by `;`), in order; append, never edit a released one.
MIGRATIONS: list[tuple[int, str]] = [
    (1, SCHEMA_1),
    (2, SCHEMA_2),
    (3, SCHEMA_3),
    (4, SCHEMA_4),
    (5, SCHEMA_5),
    (6, SCHEMA_6),
    (7, SCHEMA_7),
    (8, SCHEMA_8),
    (9, SCHEMA_9),
    (10, SCHEMA_10),
    (11, SCHEMA_11),
    (12, SCHEMA_12),
    (13, SCHEMA_13),
]
LATEST = MIGRATIONS[-1][0]
VERSION_QUERY = "SELECT coalesce(max(version), 0) FROM schema_version"


def migrate_url(url: str, where: str) -> int:
    """Bring the database at `url` to LATEST on a connection of its own; returns the version it
    had. StoreUnavailable when PostgreSQL cannot be reached; `where` names it in messages."""
    try:
        with psycopg.connect(url, autocommit=True, prepare_threshold=None, connect_timeout=CONNECT_TIMEOUT,
                             application_name="reviewer migrations") as conn:
            return migrate(conn, where)
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(f"PostgreSQL is unavailable for migrations ({type(exc).__name__})") from exc


def migrate(conn: psycopg.Connection, where: str) -> int:
    """Bring the database to LATEST under the advisory lock; returns the version it had.
    `conn` is in autocommit mode: the migrations are one transaction of their own."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        found = current_version(conn)
        if found > LATEST:
            raise SchemaTooNew(found, LATEST, where)
        for version, script in MIGRATIONS:
            if version > found:
                for statement in filter(str.strip, script.split(";")):
                    _run(conn, version, statement)
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
        row = conn.execute("SELECT to_regclass('procrastinate_jobs') IS NULL").fetchone()
        if row and row[0]:
            conn.execute(SchemaManager.get_schema())
    return found


def _run(conn: psycopg.Connection, version: int, statement: str) -> None:
    """One statement of a migration; a refusal (not a lost connection) says which and why."""
    try:
        conn.execute(statement)
    except psycopg.Error as exc:
        if conn.broken:
            raise  # the connection went: StoreUnavailable, from the caller
        # a refusal, some an OperationalError too (an extension not installed is UndefinedFile)
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        hint = ""
        if "pg_trgm" in statement:
            hint = ("; the repository index needs the pg_trgm extension: install it on the server (Debian: the "
                    "postgresql-contrib package) and let the database's role create it (a database owner may, "
                    "from PostgreSQL 13), or have an administrator run `CREATE EXTENSION pg_trgm` in this "
                    "database once")
        raise MigrationFailed(version, statement, reason, hint) from None


def current_version(conn: psycopg.Connection) -> int:
    row = conn.execute(VERSION_QUERY).fetchone()
    return int(row[0]) if row else 0
