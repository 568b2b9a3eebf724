"""Group commit: many concurrent callers, one writer, one transaction per batch.

Each webhook request must not be answered before its row is durably committed, and a durable
commit costs a sync. One writer task takes everything that queued up while the previous batch was
being written, writes it in one transaction on the database thread, then resolves each caller's
future. Under load the batches grow by themselves, so the sync is shared by many requests; when
idle a batch is one request and the latency is one commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")
MAX_BATCH = 512  # items a transaction: bounds how long one batch's statements hold the event loop


class GroupCommit(Generic[T, R]):
    def __init__(self, write_batch: Callable[[list[T]], Awaitable[list[R]]]) -> None:
        self._write_batch = write_batch  # writes the items in one transaction, one result each
        # (an Exception as an item's result fails that caller alone)
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._closed = False

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="group-commit")

    def post(self, item: T) -> asyncio.Future[R]:
        """Queue the item; the future resolves once it is committed (or holds the write's error)."""
        if self._closed:
            raise RuntimeError("the store is closing")
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, future))
        self._wake.set()
        return future

    async def submit(self, item: T) -> R:
        return await self.post(item)  # cancelling the caller does not take the item out of the batch

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._waiting:
                batch, self._waiting = self._waiting[:MAX_BATCH], self._waiting[MAX_BATCH:]
                await self._commit(batch)
                # Let the callers just committed answer before the next batch's statements take
                # the event loop (they run on it: `database.write_transaction`).
                await asyncio.sleep(0)
            if self._closed:
                return

    async def _commit(self, batch: list[tuple[T, asyncio.Future[R]]]) -> None:
        try:
            results = await self._write_batch([item for item, _ in batch])
        except Exception as exc:  # the whole transaction rolled back: every caller hears it
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results, strict=False):
            if future.done():
                continue
            if isinstance(result, Exception):  # that item failed alone; the others committed
                future.set_exception(result)
            else:
                future.set_result(result)

    async def close(self) -> None:
        """Write what is waiting, then stop."""
        self._closed = True
        self._wake.set()
        if self._task:
            await self._task
