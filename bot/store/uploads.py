"""SARIF uploads kept until a pull request takes them up: the `sarif_uploads` table (migration 9).

An upload (`POST /v1/repos/{owner}/{repo}/code-scanning/sarifs`, docs/analyzers.md) is stored as
its decoded results, with the head it is for, and a status the uploader polls: `pending` until a
review job of a pull request whose head is `commit_sha` applies it, then `complete` (or `failed`,
with its errors). A pull request opened later with that head takes it up then; an upload nobody
took up is deleted after `KEEP_DAYS`: by the next upload's write, and hourly by the server that
takes uploads (bot/server/api/uploads.py), as finished deliveries are; a reader never sees one older.

One store for both backends, on portable SQL (`?` placeholders, which the PostgreSQL connection
turns into `%s`, bot/store/portable.py), each call a short transaction on a worker thread (on the
process's pool when given it), as the review memory does (bot/store/reviews.py): uploads are few, and the HTTP handler and the job that
applies them run in different processes on a scaled-out server. The database is migrated by the
first call (`bot.store.migrate_database`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from bot.store.portable import Conn, PortableStore

if TYPE_CHECKING:
    from bot.store.postgres.database import Database

T = TypeVar("T")
KEEP_DAYS = 7
STATUSES = ("pending", "complete", "failed")


@dataclass(frozen=True)
class UploadRecord:
    id: str
    repo: str  # owner/name
    commit_sha: str
    ref: str
    pull_number: int | None  # from a refs/pull/N/… ref
    tool_name: str | None
    results: list[dict[str, Any]]  # bot/analyzers/stored.py's JSON of each result
    status: str = "pending"
    errors: list[str] = field(default_factory=list)
    received_at: float = 0.0
    # `results` as JSON text already (a JSON array), kept as it is: the server has it so from the
    # child process that decoded the upload (bot/analyzers/isolated.py), and never parses it again
    results_json: str | None = field(default=None, repr=False)


_COLUMNS = "id, repo, commit_sha, ref, pull_number, tool_name, results, status, errors, received_at"


def _record(row: Sequence[Any]) -> UploadRecord:
    return UploadRecord(str(row[0]), str(row[1]), str(row[2]), str(row[3]), row[4], row[5], json.loads(row[6]),
                        str(row[7]), json.loads(row[8]), float(row[9]))


class UploadStore(PortableStore):
    """The uploads of the database at `database_url` (SQLite or PostgreSQL; on the process's pool
    `db` when given)."""

    def __init__(self, database_url: str, clock: Callable[[], float] = time.time, db: Database | None = None) -> None:
        super().__init__(database_url, db)
        self.database_url = database_url
        self._clock = clock

    async def add(self, record: UploadRecord) -> None:
        """Keep an upload (`pending`); uploads older than KEEP_DAYS go in the same transaction."""
        now = self._clock()
        results = record.results_json if record.results_json is not None else json.dumps(record.results)
        values = (record.id, record.repo, record.commit_sha, record.ref, record.pull_number, record.tool_name,
                  results, record.status, json.dumps(record.errors), now, now)

        def add(conn: Conn) -> None:
            conn.execute("DELETE FROM sarif_uploads WHERE received_at < ?", (now - KEEP_DAYS * 86400,))
            conn.execute(f"INSERT INTO sarif_uploads ({_COLUMNS}, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         values)
        await self._run(add)

    async def prune(self) -> int:
        """Delete the uploads older than KEEP_DAYS; returns how many."""
        before = self._clock() - KEEP_DAYS * 86400
        return int(await self._run(lambda c: c.execute("DELETE FROM sarif_uploads WHERE received_at < ?",
                                                       (before,)).rowcount))

    async def get(self, repo: str, upload_id: str) -> UploadRecord | None:
        row = await self._run(lambda c: c.execute(
            f"SELECT {_COLUMNS} FROM sarif_uploads WHERE id = ? AND repo = ?", (upload_id, repo)).fetchone())
        return None if row is None else _record(row)

    async def for_head(self, repo: str, commit_sha: str) -> list[UploadRecord]:
        """The uploads for a head, oldest first, kept (not yet pruned) whatever their status."""
        since = self._clock() - KEEP_DAYS * 86400
        rows = await self._run(lambda c: c.execute(
            f"SELECT {_COLUMNS} FROM sarif_uploads WHERE repo = ? AND commit_sha = ? AND received_at >= ? "
            "ORDER BY received_at, id", (repo, commit_sha, since)).fetchall())
        return [_record(row) for row in rows]

    async def set_status(self, ids: Sequence[str], status: str, errors: Sequence[str] = ()) -> None:
        if status not in STATUSES:
            raise ValueError(f"upload status {status!r} is not one of {', '.join(STATUSES)}")
        rows = [(status, json.dumps(list(errors)), self._clock(), upload_id) for upload_id in ids]
        if rows:
            def update(conn: Conn) -> None:
                for row in rows:
                    conn.execute("UPDATE sarif_uploads SET status = ?, errors = ?, updated_at = ? WHERE id = ?", row)
            await self._run(update)

    async def pull_for_head(self, repo: str, commit_sha: str) -> int | None:
        """The pull request the app last heard of (a `pull_request` delivery) with this head."""
        row = await self._run(lambda c: c.execute(
            "SELECT pr_number FROM deliveries WHERE repo = ? AND head_sha = ? AND event = 'pull_request' "
            "AND pr_number IS NOT NULL ORDER BY seq DESC LIMIT 1", (repo, commit_sha)).fetchone())
        return None if row is None else int(row[0])

