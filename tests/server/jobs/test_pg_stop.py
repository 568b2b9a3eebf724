"""A job queue on PostgreSQL stops even when the cancellation of its worker is lost.

On Python 3.11, `asyncio.wait_for` can swallow a cancellation that lands as the awaited thing
completes; psycopg's pool waits for a connection that way, under procrastinate's start-up queries.
A server stopped just after it started then waited for ever for its worker (seen once in `make
test`: a sign-in test's server never finished its clean-up). Here the worker's registration loses
the cancellation on purpose."""

from __future__ import annotations

import asyncio

from bot.server.jobs.pg_queue import ProcrastinateQueue
from bot.server.metrics import Metrics
from bot.store import storage_for

BOUND = 30  # seconds; a stop that hangs is what this test catches


async def test_a_stop_ends_when_the_workers_cancellation_is_lost(pg_url):
    storage = storage_for(pg_url)
    await storage.open()  # the migrations make procrastinate's tables too
    queue = ProcrastinateQueue(pg_url, storage.deliveries, None, Metrics(), 1, dispatch=False, work=True)
    register = queue.app.job_manager.register_worker
    registering = asyncio.Event()

    async def register_losing_a_cancellation() -> int:
        registering.set()
        try:
            await asyncio.sleep(BOUND)  # the start-up query, waiting for a connection
        except asyncio.CancelledError:
            pass  # as asyncio.wait_for may on Python 3.11: the cancellation goes nowhere
        return await register()

    queue.app.job_manager.register_worker = register_losing_a_cancellation  # type: ignore[method-assign]
    try:
        await queue.start()
        await asyncio.wait_for(registering.wait(), BOUND)
        await asyncio.wait_for(queue.stop(), BOUND)
        assert queue._worker is not None and queue._worker.done()
    finally:
        await storage.close()
