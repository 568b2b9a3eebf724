"""The review memory's SQL: what the app remembers about each pull request between events,
processes and restarts (the interface, `ReviewMemory`, is bot/reviews/memory.py's).

Two backends on the same portable SQL (the `INSERT ... ON CONFLICT` both share; `?` placeholders,
which the PostgreSQL connection turns into `%s`): `SQLiteReviewMemory` in the server's SQLite file, `PostgresReviewMemory` in PostgreSQL for a
scaled-out server. Each call runs its own short transaction on a worker thread: on SQLite on a
connection of its own, on PostgreSQL on a connection of the process's pool (bot/store/portable.py),
or of its own for a memory used alone; calls are few per job, and nothing has to be closed. The statements are the `_SQLMemory` methods'
own; a backend only says how to connect and begin.

The tables are the server's migrations' (version 6 on both backends; the jobs' journal, which the
memory keeps for bot.pipeline.journal, version 7). A memory's first call brings the database to
the latest schema (`bot.store.migrate_database`) and only then runs its statement, so a memory
used alone (a CLI, a test) finds its tables, and a database a newer release migrated is refused
(SchemaTooNew). The memory counts its tables as there only once that migration has
returned, that is once it has committed: counted earlier, a job on another thread queried
`review_pauses` before the transaction creating it was committed (UndefinedTable, seen under CI
load). Two calls racing on a fresh process both migrate; the migrations' lock makes the second a
no-op.

Pull requests are named `owner/repo#number`, the queue's serialisation key, so that the jobs of one
pull request — which run one at a time — are the only writers of its rows.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bot.store.model import PostedFinding, ReviewedHead
from bot.store.portable import Conn, PortableStore, postgres_transaction, sqlite_transaction
from bot.store.sqlite.database import sqlite_path, sqlite_url
from bot.store.urls import is_postgres

if TYPE_CHECKING:
    from bot.store.postgres.database import Database

T = TypeVar("T")
CLAIM_DAYS = 7


class _SQLMemory(PortableStore):
    """The review memory's statements, on whichever connection a backend gives (`_transaction`)."""

    def __init__(self, database_url: str, clock: Callable[[], float] = time.time, db: Database | None = None) -> None:
        super().__init__(database_url, db)
        self._clock = clock

    async def last_review(self, pull: str) -> ReviewedHead | None:
        row = await self._run(lambda c: c.execute(
            "SELECT head_sha, plan_digest, report, merge_base FROM review_heads WHERE pull = ?", (pull,)).fetchone())
        return None if row is None else ReviewedHead(row[0], row[1], json.loads(row[2]), row[3])

    async def record_review(self, pull: str, reviewed: ReviewedHead) -> None:
        values = (pull, reviewed.head_sha, reviewed.plan_digest, reviewed.merge_base, json.dumps(reviewed.report),
                  self._clock())
        await self._run(lambda c: c.execute(
            "INSERT INTO review_heads (pull, head_sha, plan_digest, merge_base, report, reviewed_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (pull) DO UPDATE SET head_sha = excluded.head_sha, "
            "plan_digest = excluded.plan_digest, merge_base = excluded.merge_base, report = excluded.report, "
            "reviewed_at = excluded.reviewed_at", values))

    async def posted(self, pull: str) -> list[PostedFinding]:
        rows = await self._run(lambda c: c.execute(
            "SELECT fingerprint, path, severity, category, code, message, head_sha, source, rule, start_line, end_line "
            "FROM review_findings "
            "WHERE pull = ? ORDER BY posted_at, fingerprint", (pull,)).fetchall())
        return [PostedFinding(*row) for row in rows]

    async def add_posted(self, pull: str, findings: Iterable[PostedFinding]) -> None:
        now = self._clock()
        rows = [(pull, f.fingerprint, f.path, f.severity, f.category, f.code, f.message, f.head_sha, now, f.source,
                 f.rule, f.start_line, f.end_line) for f in findings]
        if rows:
            await self._run(lambda c: c.executemany(
                "INSERT INTO review_findings (pull, fingerprint, path, severity, category, code, message, head_sha, "
                "posted_at, source, rule, start_line, end_line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (pull, fingerprint) DO NOTHING", rows))

    async def paused_by(self, pull: str) -> str | None:
        row = await self._run(lambda c: c.execute(
            "SELECT paused_by FROM review_pauses WHERE pull = ?", (pull,)).fetchone())
        return None if row is None else str(row[0])

    async def set_paused(self, pull: str, by: str | None) -> None:
        if by is None:
            await self._run(lambda c: c.execute("DELETE FROM review_pauses WHERE pull = ?", (pull,)))
            return
        values = (pull, by, self._clock())
        await self._run(lambda c: c.execute(
            "INSERT INTO review_pauses (pull, paused_by, paused_at) VALUES (?, ?, ?) "
            "ON CONFLICT (pull) DO UPDATE SET paused_by = excluded.paused_by, paused_at = excluded.paused_at",
            values))

    async def claim_comment(self, pull: str, comment_key: str, claimed_by: str = "") -> bool:
        now = self._clock()

        def claim(conn: Conn) -> bool:
            # GitHub redelivers for 3 days: a claim older than a week guards nothing any more.
            conn.execute("DELETE FROM followup_comments WHERE seen_at < ?", (now - CLAIM_DAYS * 86400,))
            if conn.execute("INSERT INTO followup_comments (comment_key, pull, seen_at, claimed_by) "
                            "VALUES (?, ?, ?, ?) ON CONFLICT (comment_key) DO NOTHING",
                            (comment_key, pull, now, claimed_by)).rowcount == 1:
                return True
            row = conn.execute("SELECT claimed_by FROM followup_comments WHERE comment_key = ?",
                               (comment_key,)).fetchone()
            return bool(claimed_by) and row is not None and row[0] == claimed_by
        return bool(await self._run(claim))

    async def answers_since(self, thread: str, since: float) -> dict[str, int]:
        rows = await self._run(lambda c: c.execute(
            "SELECT kind, COUNT(*) FROM followup_answers WHERE thread = ? AND answered_at >= ? GROUP BY kind",
            (thread, since)).fetchall())
        return {str(kind): int(count) for kind, count in rows}

    async def record_answer(self, thread: str, kind: str) -> None:
        now = self._clock()

        def record(conn: Conn) -> None:
            # Only the last hour counts (bot.reviews.followup.WINDOW); a day is kept, then dropped.
            conn.execute("DELETE FROM followup_answers WHERE answered_at < ?", (now - 86400,))
            conn.execute("INSERT INTO followup_answers (thread, kind, answered_at) VALUES (?, ?, ?)",
                         (thread, kind, now))
        await self._run(record)


    async def journal(self, delivery_id: str) -> dict[str, Any] | None:
        row = await self._run(lambda c: c.execute(
            "SELECT body FROM job_journal WHERE delivery_id = ?", (delivery_id,)).fetchone())
        return None if row is None else dict(json.loads(row[0]))

    async def write_journal(self, delivery_id: str, body: dict[str, Any]) -> None:
        values = (delivery_id, json.dumps(body), self._clock())
        await self._run(lambda c: c.execute(
            "INSERT INTO job_journal (delivery_id, body, recorded_at) VALUES (?, ?, ?) ON CONFLICT (delivery_id) "
            "DO UPDATE SET body = excluded.body, recorded_at = excluded.recorded_at", values))


class SQLiteReviewMemory(_SQLMemory):
    """In the server's SQLite file."""

    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        super().__init__(sqlite_url(str(path)), clock)
        self.path = str(path)

    def _transaction(self) -> contextlib.AbstractContextManager[Conn]:
        return sqlite_transaction(self.path)


class PostgresReviewMemory(_SQLMemory):
    """In PostgreSQL (`postgresql://…`), for several server processes sharing one memory; on the
    process's pool when given it (`db`)."""

    def __init__(self, url: str, clock: Callable[[], float] = time.time, db: Database | None = None) -> None:
        super().__init__(url, clock, db)
        self.url = url

    def _transaction(self) -> contextlib.AbstractContextManager[Conn]:
        return postgres_transaction(self.url)


def review_memory_for(database_url: str, db: Database | None = None) -> SQLiteReviewMemory | PostgresReviewMemory:
    """The review memory in the server's database: PostgreSQL when the URL names it (on the
    process's pool `db` when given), else SQLite."""
    if is_postgres(database_url):
        return PostgresReviewMemory(database_url, db=db)
    return SQLiteReviewMemory(sqlite_path(database_url))
