"""What each account spent of its budgets, counted in the store so that every process counts the
same (docs/configuration.md, "Budgets").

One row per account and period (`day:2026-11-27` holds the reviews of a UTC day, `month:2026-11`
the tokens of a calendar month), in the server's database (migration 11 on both backends). A review
is claimed in one transaction that counts it only while the day's count is under the limit: two
processes claiming the last review of a day at once get one yes and one no (SQLite: the file's
write lock; PostgreSQL: the row's lock, under which the UPDATE's condition is evaluated again).
Tokens are added when a review's answers are in: a month's last review may pass the limit, and the
next one is refused. Each call opens a short connection on a worker thread, as the review memory
does: calls are two or three per review.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from bot.store import is_postgres, migrate_database
from bot.store.model import StoreUnavailable
from bot.store.sqlite.database import connect, sqlite_path

T = TypeVar("T")

_ENSURE = ("INSERT INTO budget_usage (account, period, reviews, tokens, updated_at) VALUES (?, ?, 0, 0, ?) "
           "ON CONFLICT (account, period) DO NOTHING")
_CLAIM = ("UPDATE budget_usage SET reviews = reviews + 1, updated_at = ? "
          "WHERE account = ? AND period = ? AND (? < 0 OR reviews < ?) RETURNING reviews")
_ADD_TOKENS = ("UPDATE budget_usage SET tokens = tokens + ?, updated_at = ? WHERE account = ? AND period = ?")
_READ = "SELECT period, reviews, tokens FROM budget_usage WHERE account = ? AND period IN (?, ?)"


@dataclass(frozen=True, slots=True)
class Spent:
    reviews_today: int
    tokens_this_month: int


class BudgetStore(Protocol):
    async def spent(self, account: str, day: str, month: str) -> Spent: ...

    async def claim_review(self, account: str, day: str, limit: int | None) -> int | None:
        """Counts one review of `account` on `day` unless `limit` is reached; the day's count after
        it, or None when the limit was reached (nothing counted). `limit` None: no limit."""
        ...

    async def add_tokens(self, account: str, month: str, tokens: int) -> None: ...


class _Conn(Protocol):
    def execute(self, sql: str, params: Any = ...) -> Any: ...


class _SQLBudgets:
    def __init__(self, url: str, clock: Callable[[], float] = time.time) -> None:
        self._url, self._clock, self._migrated = url, clock, False

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[_Conn]:
        raise NotImplementedError

    async def _run(self, work: Callable[[_Conn], T]) -> T:
        if not self._migrated:
            await migrate_database(self._url)
            self._migrated = True

        def call() -> T:
            with self._transaction() as conn:
                return work(conn)
        return await asyncio.to_thread(call)

    async def spent(self, account: str, day: str, month: str) -> Spent:
        rows = await self._run(lambda c: c.execute(_READ, (account.lower(), f"day:{day}", f"month:{month}")).fetchall())
        values = {str(period): (int(reviews), int(tokens)) for period, reviews, tokens in rows}
        return Spent(values.get(f"day:{day}", (0, 0))[0], values.get(f"month:{month}", (0, 0))[1])

    async def claim_review(self, account: str, day: str, limit: int | None) -> int | None:
        key, now, bound = account.lower(), self._clock(), -1 if limit is None else limit

        def claim(conn: _Conn) -> int | None:
            conn.execute(_ENSURE, (key, f"day:{day}", now))
            row = conn.execute(_CLAIM, (now, key, f"day:{day}", bound, bound)).fetchone()
            return None if row is None else int(row[0])
        return await self._run(claim)

    async def add_tokens(self, account: str, month: str, tokens: int) -> None:
        if tokens <= 0:
            return
        key, now = account.lower(), self._clock()

        def add(conn: _Conn) -> None:
            conn.execute(_ENSURE, (key, f"month:{month}", now))
            conn.execute(_ADD_TOKENS, (tokens, now, key, f"month:{month}"))
        await self._run(add)


class SQLiteBudgets(_SQLBudgets):
    def __init__(self, url: str, clock: Callable[[], float] = time.time) -> None:
        super().__init__(url, clock)
        self.path = sqlite_path(url)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[_Conn]:
        conn = connect(self.path)
        try:
            conn.execute("BEGIN IMMEDIATE")  # the write lock: the claim's condition sees no other writer
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()


class _PostgresConn:
    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self._conn.execute(sql.replace("?", "%s"), params)


class PostgresBudgets(_SQLBudgets):
    @contextlib.contextmanager
    def _transaction(self) -> Iterator[_Conn]:
        import psycopg

        try:
            with psycopg.connect(self._url, connect_timeout=10, prepare_threshold=None) as conn:
                yield _PostgresConn(conn)
        except psycopg.OperationalError as exc:
            raise StoreUnavailable(f"PostgreSQL is unavailable ({type(exc).__name__})") from exc


def budget_store(database_url: str, clock: Callable[[], float] = time.time) -> BudgetStore:
    """The budgets' counts in the server's database: PostgreSQL when the URL names it, else SQLite."""
    if is_postgres(database_url):
        return PostgresBudgets(database_url, clock)
    return SQLiteBudgets(database_url, clock)
