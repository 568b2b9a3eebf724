"""What the app remembers about each pull request between events, processes and restarts.

One narrow async interface (`ReviewMemory`) so that the storage layer can give it a PostgreSQL
twin; `SQLiteReviewMemory` keeps it in the server's SQLite file with plain, portable SQL (no
SQLite-only syntax beyond `INSERT ... ON CONFLICT`, which PostgreSQL shares). Each call opens its
own short connection on a worker thread: calls are few per job, and nothing has to be closed.

Pull requests are named `owner/repo#number`, the queue's serialisation key, so that the jobs of one
pull request — which run one at a time — are the only writers of its rows.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from bot.engine.fingerprints import PostedFinding

T = TypeVar("T")
CLAIM_DAYS = 7

_SCHEMA = """
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
    seen_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS followup_answers (
    thread TEXT NOT NULL,
    kind TEXT NOT NULL,
    answered_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS followup_answers_thread ON followup_answers (thread, answered_at);
"""


@dataclass(frozen=True)
class ReviewedHead:
    """The last head a model review completed for, with the plan it followed and what the check
    run said (so an event that changes nothing can complete its run the same way)."""

    head_sha: str
    plan_digest: str
    report: dict[str, Any]
    merge_base: str = ""


class ReviewMemory(Protocol):
    async def last_review(self, pull: str) -> ReviewedHead | None: ...

    async def record_review(self, pull: str, reviewed: ReviewedHead) -> None: ...

    async def posted(self, pull: str) -> list[PostedFinding]: ...

    async def add_posted(self, pull: str, findings: Iterable[PostedFinding]) -> None: ...

    async def paused_by(self, pull: str) -> str | None: ...

    async def set_paused(self, pull: str, by: str | None) -> None: ...

    async def claim_comment(self, pull: str, comment_key: str) -> bool:
        """True the first time a comment (`issue_comment:123`, …) is claimed: a comment is answered
        once, however often its delivery comes."""
        ...

    async def answers_since(self, thread: str, since: float) -> dict[str, int]:
        """Answers and notices given in `thread` since `since` (epoch seconds), by kind."""
        ...

    async def record_answer(self, thread: str, kind: str) -> None: ...


class SQLiteReviewMemory:
    def __init__(self, path: str | Path, clock: Callable[[], float] = time.time) -> None:
        self.path = str(path)
        self._clock = clock
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        if not self._ready:
            conn.executescript(_SCHEMA)
            self._ready = True
        return conn

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        def call() -> T:
            conn = self._connect()
            try:
                conn.execute("BEGIN IMMEDIATE")
                result = work(conn)
                conn.execute("COMMIT")
                return result
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                conn.close()
        return await asyncio.to_thread(call)

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
            "SELECT fingerprint, path, severity, category, code, message, head_sha FROM review_findings WHERE pull = ? "
            "ORDER BY rowid", (pull,)).fetchall())
        return [PostedFinding(*row) for row in rows]

    async def add_posted(self, pull: str, findings: Iterable[PostedFinding]) -> None:
        rows = [(pull, f.fingerprint, f.path, f.severity, f.category, f.code, f.message, f.head_sha) for f in findings]
        if rows:
            await self._run(lambda c: c.executemany(
                "INSERT INTO review_findings (pull, fingerprint, path, severity, category, code, message, head_sha) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (pull, fingerprint) DO NOTHING", rows))

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

    async def claim_comment(self, pull: str, comment_key: str) -> bool:
        now = self._clock()

        def claim(conn: sqlite3.Connection) -> int:
            # GitHub redelivers for 3 days: a claim older than a week guards nothing any more.
            conn.execute("DELETE FROM followup_comments WHERE seen_at < ?", (now - CLAIM_DAYS * 86400,))
            return conn.execute("INSERT INTO followup_comments (comment_key, pull, seen_at) VALUES (?, ?, ?) "
                                "ON CONFLICT (comment_key) DO NOTHING", (comment_key, pull, now)).rowcount
        return await self._run(claim) == 1

    async def answers_since(self, thread: str, since: float) -> dict[str, int]:
        rows = await self._run(lambda c: c.execute(
            "SELECT kind, COUNT(*) FROM followup_answers WHERE thread = ? AND answered_at >= ? GROUP BY kind",
            (thread, since)).fetchall())
        return {str(kind): int(count) for kind, count in rows}

    async def record_answer(self, thread: str, kind: str) -> None:
        now = self._clock()

        def record(conn: sqlite3.Connection) -> None:
            # Only the last hour counts (conversation.WINDOW); a day is kept, then dropped.
            conn.execute("DELETE FROM followup_answers WHERE answered_at < ?", (now - 86400,))
            conn.execute("INSERT INTO followup_answers (thread, kind, answered_at) VALUES (?, ?, ?)",
                         (thread, kind, now))
        await self._run(record)
