"""What each account spent of its budgets, counted in the store so that every process counts the
same (docs/configuration.md, "Budgets").

One row per account and period (`day:2026-11-27` holds the reviews of a UTC day, `month:2026-11`
the tokens of a calendar month), in the server's database (migration 11 on both backends). A review
is claimed in one transaction that counts it only while the day's count is under the limit: two
processes claiming the last review of a day at once get one yes and one no (SQLite: the file's
write lock; PostgreSQL: the row's lock, under which the UPDATE's condition is evaluated again).
Tokens are reserved before a model is asked and settled once its answers are in: a reservation
is a row of its own (`reserve:2026-11:<id>`, its estimate in `tokens`), taken in one transaction
that first locks the month's row (SQLite: the write lock; PostgreSQL: `FOR UPDATE`), so that the
month's tokens and the reservations still running are read by one claimer at a time. A claim is
granted while what is spent and reserved is under the limit, and — when other reservations are
running — while this one's estimate still fits: the month's last review may pass the limit, but
ten at once cannot each spend it. Settling deletes the reservation and adds the tokens really
spent; a reservation older than RESERVATION_TTL (its process died) counts no more and is deleted.
Each call runs a short transaction on a worker thread, as the review memory does (on the
process's pool when given it): calls are two or three per review.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from bot.store import is_postgres
from bot.store.portable import Conn, PortableStore, postgres_transaction, sqlite_transaction
from bot.store.sqlite.database import sqlite_path

if TYPE_CHECKING:
    from bot.store.postgres.database import Database

T = TypeVar("T")

_ENSURE = ("INSERT INTO budget_usage (account, period, reviews, tokens, updated_at) VALUES (?, ?, 0, 0, ?) "
           "ON CONFLICT (account, period) DO NOTHING")
_CLAIM = ("UPDATE budget_usage SET reviews = reviews + 1, updated_at = ? "
          "WHERE account = ? AND period = ? AND (? < 0 OR reviews < ?) RETURNING reviews")
_ADD_TOKENS = ("UPDATE budget_usage SET tokens = tokens + ?, updated_at = ? WHERE account = ? AND period = ?")
_READ = "SELECT period, reviews, tokens FROM budget_usage WHERE account = ? AND period IN (?, ?)"
_MONTH_TOKENS = "SELECT tokens FROM budget_usage WHERE account = ? AND period = ?"
_RESERVED = ("SELECT coalesce(sum(tokens), 0), count(*) FROM budget_usage WHERE account = ? AND period LIKE ? "
             "AND updated_at >= ?")
_FORGET_STALE = "DELETE FROM budget_usage WHERE account = ? AND period LIKE ? AND updated_at < ?"
_RESERVE = "INSERT INTO budget_usage (account, period, reviews, tokens, updated_at) VALUES (?, ?, 0, ?, ?)"
_RELEASE = "DELETE FROM budget_usage WHERE account = ? AND period = ?"
RESERVATION_TTL = 2 * 3600.0  # seconds a reservation counts: longer than any review runs


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

    async def reserve(self, account: str, month: str, reservation: str, tokens: int, limit: int) -> int | None:
        """Reserves `tokens` of `account`'s month for a model call (`reservation` names it) while
        the month's limit allows (see the module's docstring): None when granted, else the
        month's tokens spent so far."""
        ...

    async def settle(self, account: str, month: str, reservation: str, tokens: int) -> None:
        """Ends the reservation and adds the `tokens` really spent to the month."""
        ...


class _SQLBudgets(PortableStore):
    _LOCK = ""  # how a SELECT locks the rows it reads, within its transaction
    def __init__(self, url: str, clock: Callable[[], float] = time.time, db: Database | None = None) -> None:
        super().__init__(url, db)
        self._clock = clock

    async def spent(self, account: str, day: str, month: str) -> Spent:
        rows = await self._run(lambda c: c.execute(_READ, (account.lower(), f"day:{day}", f"month:{month}")).fetchall())
        values = {str(period): (int(reviews), int(tokens)) for period, reviews, tokens in rows}
        return Spent(values.get(f"day:{day}", (0, 0))[0], values.get(f"month:{month}", (0, 0))[1])

    async def claim_review(self, account: str, day: str, limit: int | None) -> int | None:
        key, now, bound = account.lower(), self._clock(), -1 if limit is None else limit

        def claim(conn: Conn) -> int | None:
            conn.execute(_ENSURE, (key, f"day:{day}", now))
            row = conn.execute(_CLAIM, (now, key, f"day:{day}", bound, bound)).fetchone()
            return None if row is None else int(row[0])
        return await self._run(claim)

    async def add_tokens(self, account: str, month: str, tokens: int) -> None:
        if tokens <= 0:
            return
        key, now = account.lower(), self._clock()

        def add(conn: Conn) -> None:
            conn.execute(_ENSURE, (key, f"month:{month}", now))
            conn.execute(_ADD_TOKENS, (tokens, now, key, f"month:{month}"))
        await self._run(add)


    async def reserve(self, account: str, month: str, reservation: str, tokens: int, limit: int) -> int | None:
        key, now = account.lower(), self._clock()
        mine, pattern = f"reserve:{month}:{reservation}", f"reserve:{month}:%"

        def claim(conn: Conn) -> int | None:
            conn.execute(_ENSURE, (key, f"month:{month}", now))
            spent = int(conn.execute(_MONTH_TOKENS + self._LOCK, (key, f"month:{month}")).fetchone()[0])
            conn.execute(_FORGET_STALE, (key, "reserve:%", now - RESERVATION_TTL))
            reserved, running = (int(x) for x in conn.execute(_RESERVED, (key, pattern, now - RESERVATION_TTL))
                                 .fetchone())
            if spent + reserved >= limit or (running and spent + reserved + tokens > limit):
                return spent
            conn.execute(_RESERVE, (key, mine, tokens, now))
            return None
        return await self._run(claim)

    async def settle(self, account: str, month: str, reservation: str, tokens: int) -> None:
        key, now = account.lower(), self._clock()

        def done(conn: Conn) -> None:
            conn.execute(_ENSURE, (key, f"month:{month}", now))
            conn.execute(_MONTH_TOKENS + self._LOCK, (key, f"month:{month}")).fetchone()
            conn.execute(_RELEASE, (key, f"reserve:{month}:{reservation}"))
            if tokens > 0:
                conn.execute(_ADD_TOKENS, (tokens, now, key, f"month:{month}"))
        await self._run(done)


class SQLiteBudgets(_SQLBudgets):
    def __init__(self, url: str, clock: Callable[[], float] = time.time) -> None:
        super().__init__(url, clock)
        self.path = sqlite_path(url)

    def _transaction(self) -> contextlib.AbstractContextManager[Conn]:
        return sqlite_transaction(self.path)  # the write lock: a claim's read and write see no other writer


class PostgresBudgets(_SQLBudgets):
    _LOCK = " FOR UPDATE"  # the month's row: claims of one account's month take turns
    def _transaction(self) -> contextlib.AbstractContextManager[Conn]:
        return postgres_transaction(self._database_url, prepare_threshold=None)


def budget_store(database_url: str, clock: Callable[[], float] = time.time, db: Database | None = None) -> BudgetStore:
    """The budgets' counts in the server's database: PostgreSQL when the URL names it (on the
    process's pool `db` when given), else SQLite."""
    if is_postgres(database_url):
        return PostgresBudgets(database_url, clock, db)
    return SQLiteBudgets(database_url, clock)
