"""The SQLite schema, versioned: each migration runs once, in order, recorded in `schema_version`.

Version 1 is the schema every earlier release made with `CREATE ... IF NOT EXISTS`, so a file from
before versioning is taken up as it is; version 6 does the same for the tables the sign-in store
and the review memory used to make on their own. Migrations run inside one `BEGIN IMMEDIATE`
transaction, which takes the file's write lock: two processes starting at once migrate one after
the other, and the second finds nothing left to do. A file migrated by a newer release is refused
(SchemaTooNew). They run when the storage opens, and when a store on the same file opens alone
(`bot.store.migrate_database`), so a store never finds a table not yet committed.

The repository index is not here: on SQLite it has a file of its own (bot.store.index.sqlite), so that a
long build never holds the write lock the webhook intake commits under.
"""

from __future__ import annotations

import os
import sqlite3
from urllib.parse import quote

from bot.store.model import SchemaTooNew, StoreRefused
from bot.store.sqlite.database import connect

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
# memory (bot.store.coordination.LocalCoordination), so here the number is kept and nothing made.
# 3: the admin console's delivery timeline (bot.store.sqlite.timeline); IF NOT EXISTS takes up the
# table a pre-release console made on its own.
# 4: a pull request's queued deliveries found by their key (a worker's `queued(key)`), not by
# reading every queued row.
# 5: when the dispatcher last queued a delivery (`queued_at`, set with its classification or by a
# recovery), for the console's timeline; rows from before it keep NULL.
# 6: the sign-in store's tables (bot.store.signin) and the review memory's (bot.store.reviews), which
# each made its own with CREATE ... IF NOT EXISTS and no version; their statements verbatim, so a file
# where they already made them is taken up as it is. PostgreSQL's 6 adds the repository index's
# tables too; here the index keeps its own file.
# 7: a job's journal (bot.pipeline.journal): what a job decided to post, recorded before it posts,
# so that an attempt run again after an interruption posts the same and nothing twice; a row lives
# while its delivery's job is open (`finish` deletes it).
# 8: what a delivery's review came to, beside its job's state (bot.store.model.ReviewResult): rows from
# before it keep NULL, shown by their job's state as before.
QUEUED_BY_KEY = "CREATE INDEX IF NOT EXISTS deliveries_queued_key ON deliveries(job_key, seq) WHERE state = 'queued'"
SIGN_IN_AND_MEMORY = """
CREATE TABLE IF NOT EXISTS auth_pending (id TEXT PRIMARY KEY, body TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS auth_sessions (id TEXT PRIMARY KEY, body TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS auth_signins (seq INTEGER PRIMARY KEY, at REAL NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS auth_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS auth_used_ids (id TEXT PRIMARY KEY, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS auth_sso_index (session TEXT PRIMARY KEY, connector TEXT NOT NULL,
    name_id TEXT NOT NULL, body TEXT NOT NULL, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS review_heads (
    pull TEXT PRIMARY KEY,
    head_sha TEXT NOT NULL,
    plan_digest TEXT NOT NULL,
    merge_base TEXT NOT NULL,
    report TEXT NOT NULL,
    reviewed_at REAL NOT NULL
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
    posted_at REAL NOT NULL,
    PRIMARY KEY (pull, fingerprint)
);
CREATE TABLE IF NOT EXISTS review_pauses (
    pull TEXT PRIMARY KEY,
    paused_by TEXT NOT NULL,
    paused_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS followup_comments (
    comment_key TEXT PRIMARY KEY,
    pull TEXT NOT NULL,
    seen_at REAL NOT NULL,
    claimed_by TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS followup_answers (
    thread TEXT NOT NULL,
    kind TEXT NOT NULL,
    answered_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS followup_answers_thread ON followup_answers (thread, answered_at)
"""
REVIEW_OUTCOME = """
ALTER TABLE deliveries ADD COLUMN review_outcome TEXT;
ALTER TABLE deliveries ADD COLUMN review_reason TEXT
"""
# 9: analyzer results uploaded as SARIF (bot/store/uploads.py), kept until a pull request with their
# head takes them up, 7 days at most.
SARIF_UPLOADS = """
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
    received_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sarif_uploads_head ON sarif_uploads(repo, commit_sha);
CREATE INDEX IF NOT EXISTS sarif_uploads_received_at ON sarif_uploads(received_at)
"""
# 11: the trace a delivery's job continues (bot.telemetry), and what each account spent of its
# budgets (bot.store.budgets): reviews per UTC day, tokens per calendar month, one row per period.
BUDGETS_AND_TRACES = """
ALTER TABLE deliveries ADD COLUMN traceparent TEXT;
CREATE TABLE IF NOT EXISTS budget_usage (
    account TEXT NOT NULL,
    period TEXT NOT NULL,
    reviews INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL,
    PRIMARY KEY (account, period)
)
"""
# 10: learnings (bot.store.learnings, bot/learnings/): what teams told the reviewer, one JSON body a
# row with the columns the API filters on; and what became of each posted finding (its outcome,
# its inline comment's id, where its lines are now), which the tally, the console and /metrics read.
LEARNINGS = """
CREATE TABLE IF NOT EXISTS learnings (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    repository TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    created_at REAL NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS learnings_scope ON learnings (account, repository, created_at);
CREATE TABLE IF NOT EXISTS finding_outcomes (
    pull TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    account TEXT NOT NULL,
    repository TEXT NOT NULL,
    comment_id INTEGER,
    state TEXT NOT NULL,
    posted_at REAL NOT NULL,
    decided_at REAL,
    body TEXT NOT NULL,
    PRIMARY KEY (pull, fingerprint)
);
CREATE INDEX IF NOT EXISTS finding_outcomes_comment ON finding_outcomes (comment_id);
CREATE INDEX IF NOT EXISTS finding_outcomes_posted ON finding_outcomes (account, repository, posted_at)
"""

# 12: the audit log (bot.audit.log, bot.store.sqlite.audit): who changed what, when, from where; pruned
# by age like finished deliveries.
AUDIT_LOG = """
CREATE TABLE IF NOT EXISTS audit_log (
    seq INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    actor TEXT NOT NULL,
    ip TEXT,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    account TEXT,
    details TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_at ON audit_log(at)
"""
# 13: what each posted finding came from and where it was (bot/reviews/ledger.py): its source, an
# analyzer's rule id and its lines at the head it was posted at.
FINDING_SOURCES = """
ALTER TABLE review_findings ADD COLUMN source TEXT NOT NULL DEFAULT 'model';
ALTER TABLE review_findings ADD COLUMN rule TEXT;
ALTER TABLE review_findings ADD COLUMN start_line INTEGER NOT NULL DEFAULT 0;
ALTER TABLE review_findings ADD COLUMN end_line INTEGER NOT NULL DEFAULT 0
"""
MIGRATIONS: list[tuple[int, str]] = [
    (1, DELIVERIES),
    (2, ""),
    (3, TIMELINE),
    (4, QUEUED_BY_KEY),
    (5, "ALTER TABLE deliveries ADD COLUMN queued_at REAL"),
    (6, SIGN_IN_AND_MEMORY),
    (7, "CREATE TABLE IF NOT EXISTS job_journal (delivery_id TEXT PRIMARY KEY, body TEXT NOT NULL, "
        "recorded_at REAL NOT NULL)"),
    (8, REVIEW_OUTCOME),
    (9, SARIF_UPLOADS),
    (10, LEARNINGS),
    (11, BUDGETS_AND_TRACES),
    (12, AUDIT_LOG),
    (13, FINDING_SOURCES),
]
LATEST = MIGRATIONS[-1][0]
VERSION_QUERY = "SELECT coalesce(max(version), 0) FROM schema_version"


def migrate_file(path: str) -> int:
    """Bring the file at `path` to LATEST on a connection of its own; returns the version it had."""
    conn = connect(path)
    try:
        return migrate(conn, path)
    finally:
        conn.close()


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
    return int(conn.execute(VERSION_QUERY).fetchone()[0])


def version_of_file(path: str) -> int | None:
    """The schema version of the file at `path`, read only (nothing is created or migrated); None
    when the file does not exist or has no schema yet. StoreRefused when it is not a SQLite
    database, or cannot be read."""
    if not os.path.exists(path):
        return None
    try:
        conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True)
        try:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_version'").fetchone() is None:
                return None
            return current_version(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreRefused("refused", f"{path} cannot be read as a SQLite database: {exc}") from exc
