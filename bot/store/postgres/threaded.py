"""A connection of the process's pool used from a worker thread, for the stores whose statements
are blocking calls (the portable-SQL stores of bot/store/portable.py, the repository index of
bot/store/index/postgres.py): each statement is run on the pool's event loop, and the thread waits
for its rows. The connection stays the thread's for the whole transaction, so that what one
statement takes (a row lock, an advisory lock) is held by the next.

The loop must not wait for the thread itself (it runs the statements): these stores run their
work with `asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Iterator, Sequence
from typing import Any, TypeVar

import psycopg

T = TypeVar("T")


class Rows:
    """What a statement gave: its rows, read already, and how many rows it changed."""

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows, self._next, self.rowcount = rows, 0, rowcount

    def fetchone(self) -> Any:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[Any]:
        rows, self._next = self._rows[self._next:], len(self._rows)
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class ThreadConn:
    """`conn` (an async connection of the pool, opened on `loop`) for a worker thread."""

    def __init__(self, conn: psycopg.AsyncConnection, loop: asyncio.AbstractEventLoop) -> None:
        self.conn, self.loop = conn, loop

    def call(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Rows:
        return self.call(self._execute(sql, params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Rows:
        return self.call(self._executemany(sql, list(rows)))

    def commit(self) -> None:
        self.call(self.conn.commit())

    async def _execute(self, sql: str, params: Sequence[Any] | None) -> Rows:
        cursor = await self.conn.execute(sql, params)
        rows = await cursor.fetchall() if cursor.description is not None else []
        return Rows(rows, cursor.rowcount)

    async def _executemany(self, sql: str, rows: list[Sequence[Any]]) -> Rows:
        async with self.conn.cursor() as cursor:
            await cursor.executemany(sql, rows)
            return Rows([], cursor.rowcount)
