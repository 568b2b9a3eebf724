"""Learnings and the outcomes of posted findings, in the server's database (migration 10).

One class of portable SQL (`?` placeholders, which the PostgreSQL connection turns into `%s`), two
ways to connect, as the review memory does: `learnings_store(url)` gives the SQLite one for
`sqlite:///…` and the PostgreSQL one for `postgresql://…` (on the process's pool when given it,
bot/store/portable.py). Each call runs a short transaction on a worker thread: calls are few per job
and per API request. The first call brings
the database to the latest schema (`bot.store.migrate_database`), so a store used alone (a CLI, a
test) finds its tables.

A learning is kept as its JSON (`LearningRow.body`, which bot/learnings/model.py writes) with the
columns the API filters on: the account and repository lowercased (logins compare
case-insensitively), '' for "every repository of the account". A followed finding (`FollowedRow`)
is kept as its JSON with its state and times in columns, so that /metrics and the console count in
SQL. The store deals in these rows only; bot/learnings/book.py turns them into the learnings'
shapes, so that the store imports nothing above it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from bot.store import is_postgres
from bot.store.portable import Conn, PortableStore, postgres_transaction, sqlite_transaction
from bot.store.sqlite.database import sqlite_path

if TYPE_CHECKING:
    from bot.store.postgres.database import Database

T = TypeVar("T")


@dataclass(frozen=True)
class LearningRow:
    """A learning as kept: its id, the columns the API filters on, its JSON body."""

    id: str
    account: str
    repository: str  # '' for every repository of the account
    kind: str
    created_at: float  # seconds since the epoch
    body: dict[str, Any]


@dataclass(frozen=True)
class FollowedRow:
    """A posted finding followed to its outcome, as kept: its keys, the columns counted in SQL, its
    JSON body."""

    pull: str
    fingerprint: str
    account: str
    repository: str
    comment_id: int | None
    state: str
    posted_at: float
    decided_at: float | None
    body: dict[str, Any]


class LearningStore(PortableStore):
    """The statements; a backend says how to connect (`_transaction`)."""

    # -- learnings ---------------------------------------------------------------------------

    async def add(self, row: LearningRow) -> None:
        values = (row.id, row.account.lower(), row.repository.lower(), row.kind, row.created_at, json.dumps(row.body))
        await self._run(lambda c: c.execute(
            "INSERT INTO learnings (id, account, repository, kind, created_at, body) VALUES (?, ?, ?, ?, ?, ?)",
            values))

    async def get(self, learning_id: str) -> dict[str, Any] | None:
        """A learning's body."""
        row = await self._run(lambda c: c.execute("SELECT body FROM learnings WHERE id = ?",
                                                  (learning_id,)).fetchone())
        return None if row is None else json.loads(row[0])

    async def replace(self, row: LearningRow) -> bool:
        """Store a changed learning (same id); False when it is gone."""
        values = (row.account.lower(), row.repository.lower(), row.kind, json.dumps(row.body), row.id)
        count = await self._run(lambda c: c.execute(
            "UPDATE learnings SET account = ?, repository = ?, kind = ?, body = ? WHERE id = ?", values).rowcount)
        return bool(count)

    async def delete(self, learning_id: str) -> dict[str, Any] | None:
        """Delete a learning; the body of the one deleted, or None when there was none."""
        def work(conn: Conn) -> dict[str, Any] | None:
            row = conn.execute("SELECT body FROM learnings WHERE id = ?", (learning_id,)).fetchone()
            if row is None:
                return None
            conn.execute("DELETE FROM learnings WHERE id = ?", (learning_id,))
            return json.loads(row[0])
        return await self._run(work)

    async def learnings(self, *, account: str | None = None, repository: str | None = None,
                        kind: str | None = None) -> list[dict[str, Any]]:
        """Bodies, newest first. `repository` (with `account`): the learnings that apply to it, those
        of the whole account included."""
        where: list[str] = []
        params: list[Any] = []
        if account is not None:
            where.append("account = ?")
            params.append(account.lower())
        if repository is not None:
            where.append("repository IN (?, '')")
            params.append(repository.lower())
        if kind is not None:
            where.append("kind = ?")
            params.append(kind)
        sql = "SELECT body FROM learnings" + (f" WHERE {' AND '.join(where)}" if where else "") + \
              " ORDER BY created_at DESC, id DESC"
        rows = await self._run(lambda c: c.execute(sql, tuple(params)).fetchall())
        return [json.loads(row[0]) for row in rows]

    # -- followed findings -------------------------------------------------------------------

    async def follow(self, rows: Iterable[FollowedRow]) -> None:
        """Start following posted findings (one already followed is left as it is)."""
        values = [_followed_values(r) for r in rows]
        if not values:
            return

        def work(conn: Conn) -> None:
            for value in values:
                conn.execute(
                    "INSERT INTO finding_outcomes (pull, fingerprint, account, repository, comment_id, state, "
                    "posted_at, decided_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (pull, fingerprint) DO NOTHING", value)
        await self._run(work)

    async def update(self, rows: Iterable[FollowedRow]) -> None:
        """Store what happened to followed findings (their lines, marks, state, comment id)."""
        values = [(r.comment_id, r.state, r.decided_at, json.dumps(r.body), r.pull, r.fingerprint) for r in rows]
        if not values:
            return

        def work(conn: Conn) -> None:
            for value in values:
                conn.execute("UPDATE finding_outcomes SET comment_id = ?, state = ?, decided_at = ?, body = ? "
                             "WHERE pull = ? AND fingerprint = ?", value)
        await self._run(work)

    async def followed(self, pull: str) -> list[FollowedRow]:
        """The pull request's posted findings, oldest first."""
        return await self._followed_where(["pull = ?"], [pull])

    async def by_comment(self, pull: str, comment_id: int) -> FollowedRow | None:
        """The finding posted as this inline comment of the pull request, if any."""
        found = await self._followed_where(["comment_id = ?", "pull = ?"], [comment_id, pull])
        return found[0] if found else None

    async def outcomes(self, *, account: str | None = None, repository: str | None = None,
                       since: float | None = None) -> list[FollowedRow]:
        """Posted findings and what became of them, for the console's chart and tables."""
        where: list[str] = []
        params: list[Any] = []
        if account is not None:
            where.append("account = ?")
            params.append(account.lower())
        if repository is not None:
            where.append("repository = ?")
            params.append(repository.lower())
        if since is not None:
            where.append("posted_at >= ?")
            params.append(since)
        return await self._followed_where(where, params)

    async def _followed_where(self, where: list[str], params: list[Any]) -> list[FollowedRow]:
        """The one read of followed findings: the rows matching every condition, oldest first."""
        sql = "SELECT pull, fingerprint, account, repository, comment_id, state, posted_at, decided_at, body " \
              "FROM finding_outcomes" + (f" WHERE {' AND '.join(where)}" if where else "") + \
              " ORDER BY posted_at, fingerprint"
        rows = await self._run(lambda c: c.execute(sql, tuple(params)).fetchall())
        return [_followed_row(row) for row in rows]

    async def count_states(self) -> dict[str, int]:
        """Posted findings by state, over every repository (what /metrics counts)."""
        rows = await self._run(lambda c: c.execute(
            "SELECT state, COUNT(*) FROM finding_outcomes GROUP BY state").fetchall())
        return {str(state): int(count) for state, count in rows}


def _followed_values(r: FollowedRow) -> tuple:
    return (r.pull, r.fingerprint, r.account.lower(), r.repository.lower(), r.comment_id, r.state,
            r.posted_at, r.decided_at, json.dumps(r.body))


def _followed_row(row: Sequence[Any]) -> FollowedRow:
    pull, fingerprint, account, repository, comment_id, state, posted_at, decided_at, body = row
    return FollowedRow(str(pull), str(fingerprint), str(account), str(repository),
                       int(comment_id) if comment_id is not None else None, str(state), float(posted_at),
                       float(decided_at) if decided_at is not None else None, json.loads(body))


class SQLiteLearningStore(LearningStore):
    def __init__(self, database_url: str) -> None:
        super().__init__(database_url)
        self.path = sqlite_path(database_url)

    def _transaction(self) -> contextlib.AbstractContextManager[Conn]:
        return sqlite_transaction(self.path)


class PostgresLearningStore(LearningStore):
    def _transaction(self) -> contextlib.AbstractContextManager[Conn]:
        return postgres_transaction(self._database_url)


def learnings_store(database_url: str, db: Database | None = None) -> LearningStore:
    """The store in the server's database: PostgreSQL when the URL names it (on the process's pool
    `db` when given), else SQLite."""
    if is_postgres(database_url):
        return PostgresLearningStore(database_url, db)
    return SQLiteLearningStore(database_url)
