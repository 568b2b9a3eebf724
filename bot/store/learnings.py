"""Learnings and the outcomes of posted findings, in the server's database (migration 10).

One class of portable SQL (`?` placeholders, which the PostgreSQL connection turns into `%s`), two
ways to connect, as the review memory does: `learnings_store(url)` gives the SQLite one for
`sqlite:///…` and the PostgreSQL one for `postgresql://…` (on the process's pool when given it,
bot/store/portable.py). Each call runs a short transaction on a worker thread: calls are few per job
and per API request. The first call brings
the database to the latest schema (`bot.store.migrate_database`), so a store used alone (a CLI, a
test) finds its tables.

A learning is kept as its JSON (`bot.learnings.model`) with the columns the API filters on: the
account and repository lowercased (logins compare case-insensitively), '' for "every repository of
the account". A followed finding (`bot.learnings.followed`) is kept as its JSON with its state and
times in columns, so that /metrics and the console count in SQL.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from bot.learnings.followed import Followed, from_body
from bot.learnings.model import Learning, from_json
from bot.learnings.tally import Record
from bot.store import is_postgres
from bot.store.portable import Conn, PortableStore, postgres_transaction, sqlite_transaction
from bot.store.sqlite.database import sqlite_path

if TYPE_CHECKING:
    from bot.store.postgres.database import Database

T = TypeVar("T")


class LearningStore(PortableStore):
    """The statements; a backend says how to connect (`_transaction`)."""

    # -- learnings ---------------------------------------------------------------------------

    async def add(self, learning: Learning) -> None:
        values = (learning.id, *_scope_columns(learning), learning.kind, learning.created.timestamp(),
                  json.dumps(learning.to_json()))
        await self._run(lambda c: c.execute(
            "INSERT INTO learnings (id, account, repository, kind, created_at, body) VALUES (?, ?, ?, ?, ?, ?)",
            values))

    async def get(self, learning_id: str) -> Learning | None:
        row = await self._run(lambda c: c.execute("SELECT body FROM learnings WHERE id = ?",
                                                  (learning_id,)).fetchone())
        return None if row is None else from_json(json.loads(row[0]))

    async def replace(self, learning: Learning) -> bool:
        """Store a changed learning (same id); False when it is gone."""
        values = (*_scope_columns(learning), learning.kind, json.dumps(learning.to_json()), learning.id)
        count = await self._run(lambda c: c.execute(
            "UPDATE learnings SET account = ?, repository = ?, kind = ?, body = ? WHERE id = ?", values).rowcount)
        return bool(count)

    async def delete(self, learning_id: str) -> Learning | None:
        """Delete a learning; the one deleted, or None when there was none."""
        def work(conn: Conn) -> Learning | None:
            row = conn.execute("SELECT body FROM learnings WHERE id = ?", (learning_id,)).fetchone()
            if row is None:
                return None
            conn.execute("DELETE FROM learnings WHERE id = ?", (learning_id,))
            return from_json(json.loads(row[0]))
        return await self._run(work)

    async def learnings(self, *, account: str | None = None, repository: str | None = None,
                   kind: str | None = None) -> list[Learning]:
        """Newest first. `repository` (with `account`): the learnings that apply to it, those of the
        whole account included."""
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
        return [from_json(json.loads(row[0])) for row in rows]

    # -- followed findings -------------------------------------------------------------------

    async def follow(self, findings: Iterable[Followed]) -> None:
        """Start following posted findings (one already followed is left as it is)."""
        rows = [_followed_row(f) for f in findings]
        if not rows:
            return

        def work(conn: Conn) -> None:
            for row in rows:
                conn.execute(
                    "INSERT INTO finding_outcomes (pull, fingerprint, account, repository, comment_id, state, "
                    "posted_at, decided_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (pull, fingerprint) DO NOTHING", row)
        await self._run(work)

    async def update(self, findings: Iterable[Followed]) -> None:
        """Store what happened to followed findings (their lines, marks, state, comment id)."""
        rows = [_followed_row(f) for f in findings]
        if not rows:
            return

        def work(conn: Conn) -> None:
            for pull, fingerprint, _, _, comment_id, state, _, decided_at, body in rows:
                conn.execute("UPDATE finding_outcomes SET comment_id = ?, state = ?, decided_at = ?, body = ? "
                             "WHERE pull = ? AND fingerprint = ?",
                             (comment_id, state, decided_at, body, pull, fingerprint))
        await self._run(work)

    async def followed(self, pull: str) -> list[Followed]:
        """The pull request's posted findings, oldest first."""
        rows = await self._run(lambda c: c.execute(
            "SELECT pull, account, repository, comment_id, body FROM finding_outcomes WHERE pull = ? "
            "ORDER BY posted_at, fingerprint", (pull,)).fetchall())
        return [_followed(row) for row in rows]

    async def by_comment(self, pull: str, comment_id: int) -> Followed | None:
        """The finding posted as this inline comment of the pull request, if any."""
        row = await self._run(lambda c: c.execute(
            "SELECT pull, account, repository, comment_id, body FROM finding_outcomes "
            "WHERE comment_id = ? AND pull = ?", (comment_id, pull)).fetchone())
        return None if row is None else _followed(row)

    async def records(self, *, account: str | None = None, repository: str | None = None,
                      since: float | None = None) -> list[Record]:
        """What became of posted findings, for the console's chart and tables."""
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
        sql = "SELECT pull, account, repository, comment_id, body FROM finding_outcomes" + \
              (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY posted_at, fingerprint"
        rows = await self._run(lambda c: c.execute(sql, tuple(params)).fetchall())
        out = []
        for row in rows:
            followed = _followed(row)
            t = followed.tracked
            out.append(Record(followed.account, followed.repository, t.posted_at, followed.state, t.rules,
                              t.category, followed.decided_at))
        return out

    async def count_states(self) -> dict[str, int]:
        """Posted findings by state, over every repository (what /metrics counts)."""
        rows = await self._run(lambda c: c.execute(
            "SELECT state, COUNT(*) FROM finding_outcomes GROUP BY state").fetchall())
        return {str(state): int(count) for state, count in rows}


def _scope_columns(learning: Learning) -> tuple[str, str]:
    return learning.scope.account.lower(), (learning.scope.repository or "").lower()


def _followed_row(f: Followed) -> tuple:
    decided = f.decided_at
    return (f.pull, f.tracked.fingerprint, f.account.lower(), f.repository.lower(), f.comment_id, f.state,
            f.tracked.posted_at.timestamp(), decided.timestamp() if decided else None, json.dumps(f.body()))


def _followed(row: Sequence[Any]) -> Followed:
    pull, account, repository, comment_id, body = row
    return from_body(str(pull), str(account), str(repository), int(comment_id) if comment_id is not None else None,
                     json.loads(body))


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
