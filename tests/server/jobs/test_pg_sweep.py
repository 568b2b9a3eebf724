"""The stalled-job sweep and the worker's own records on real PostgreSQL (procrastinate's tables as
the server migrates them): which jobs a sweep gives back to the queue, that two sweeps at once give
one back once, and that a living worker's heartbeat and a job's end survive PostgreSQL going away."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psycopg
import pytest

from bot.server.jobs.pg_queue import ProcrastinateQueue, make_app
from bot.server.jobs.pg_worker import Heartbeat, ReviewerWorker
from bot.server.metrics import Metrics
from bot.store import storage_for
from tests.support.server_support import wait_for


@pytest.fixture
async def queues(pg_url) -> AsyncIterator[list[ProcrastinateQueue]]:
    storage = storage_for(pg_url)
    await storage.open()  # the migrations make procrastinate's tables too
    made = [ProcrastinateQueue(pg_url, storage.deliveries, None, Metrics(), 1, dispatch=False, work=False)
            for _ in range(2)]
    for queue in made:
        await queue.start()
    try:
        yield made
    finally:
        for queue in made:
            await queue.stop()
        await storage.close()


def _held(url: str, key: str, heartbeat_age: float | None) -> int:
    """A job of `key` running under a worker whose last beat is `heartbeat_age` seconds old (None:
    a worker whose row was pruned, which leaves the job's worker_id NULL)."""
    with psycopg.connect(url, autocommit=True) as conn:
        worker = None
        if heartbeat_age is not None:
            (worker,) = conn.execute("INSERT INTO procrastinate_workers (last_heartbeat) VALUES "
                                     "(now() - make_interval(secs => %s)) RETURNING id", (heartbeat_age,)).fetchone()
        (job,) = conn.execute(
            "INSERT INTO procrastinate_jobs (queue_name, task_name, lock, queueing_lock, args, status, worker_id) "
            "VALUES ('default', 'reviewer.review_key', %s, %s, %s, 'doing', %s) RETURNING id",
            (key, key, psycopg.types.json.Jsonb({"key": key}), worker)).fetchone()
    return int(job)


def _job(url: str, job: int) -> tuple[str, int]:
    with psycopg.connect(url) as conn:
        status, attempts = conn.execute("SELECT status, attempts FROM procrastinate_jobs WHERE id = %s",
                                        (job,)).fetchone()
    return str(status), int(attempts)


async def test_two_sweeps_at_once_retry_a_dead_workers_job_once(queues, pg_url):
    """Both sweeps see the job stalled; the one that comes second must find it back in the queue
    and leave it there (it once took the failed retry for a waiting job and failed it instead)."""
    dead = _held(pg_url, "o/r#1", heartbeat_age=60)
    pruned = _held(pg_url, "o/r#2", heartbeat_age=None)
    await asyncio.gather(*(queue.retry_stalled() for queue in queues))
    assert _job(pg_url, dead) == ("todo", 1)
    assert _job(pg_url, pruned) == ("todo", 1)


async def test_a_living_workers_job_is_left_running(queues, pg_url):
    alive = _held(pg_url, "o/r#3", heartbeat_age=1)
    await queues[0].retry_stalled()
    assert _job(pg_url, alive) == ("doing", 0)


async def test_a_stalled_job_whose_key_has_a_job_waiting_fails_for_it(queues, pg_url):
    """The queueing lock allows one waiting job a key: that one takes the work up (its first
    step puts the dead worker's rows back in the queue), so the stalled one ends, failed."""
    dead = _held(pg_url, "o/r#4", heartbeat_age=60)
    assert await queues[0].defer("o/r#4")
    await queues[0].retry_stalled()
    assert _job(pg_url, dead)[0] == "failed"


async def test_a_beat_that_finds_its_worker_pruned_puts_it_back_and_claims_its_jobs(queues, pg_url):
    """A worker whose beats failed for a while can be pruned by another that starts (procrastinate
    does so at a worker's start): its running jobs lose their worker and look stalled to every
    sweep. Its next beat registers it again under the same id and claims them back."""
    job = _held(pg_url, "o/r#5", heartbeat_age=60)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        (worker,) = conn.execute("SELECT worker_id FROM procrastinate_jobs WHERE id = %s", (job,)).fetchone()
        conn.execute("DELETE FROM procrastinate_workers WHERE id = %s", (worker,))  # pruned
    heartbeat = Heartbeat(queues[0].app, every=5, running=lambda: [job])
    await heartbeat.beat(worker)
    await queues[1].retry_stalled()
    assert _job(pg_url, job) == ("doing", 0)  # alive again: nobody retried it
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT worker_id FROM procrastinate_jobs WHERE id = %s", (job,)).fetchone() == (worker,)
        fresh = conn.execute("SELECT last_heartbeat > now() - interval '5 seconds' FROM procrastinate_workers "
                             "WHERE id = %s", (worker,)).fetchone()
    assert fresh == (True,)


async def test_a_jobs_end_that_postgresql_could_not_take_is_recorded_once_it_is_back(pg_cluster, caplog):
    """procrastinate records a job's end once: PostgreSQL away at that moment left the job 'doing'
    under a living worker for ever, and every later job of its lock (its pull request) behind it."""
    url = pg_cluster.url
    storage = storage_for(url)
    await storage.open()
    await storage.close()
    app = make_app(url)
    started, release = asyncio.Event(), asyncio.Event()

    @app.task(name="test.held")
    async def held() -> None:
        started.set()
        await release.wait()

    await app.open_async()
    worker = ReviewerWorker(app, Heartbeat(app, 5, lambda: []), concurrency=1, wait=True,
                            install_signal_handlers=False, delete_jobs="never", name="test")
    running = asyncio.create_task(worker.run())
    try:
        job = await app.configure_task("test.held", lock="o/r#6").defer_async()
        await asyncio.wait_for(started.wait(), 30)
        await asyncio.to_thread(pg_cluster.stop, "immediate")
        release.set()  # the job ends while PostgreSQL is away

        async def tried() -> bool:
            return "could not record a job's end; trying again" in caplog.messages
        await wait_for(tried, timeout=30)
        await asyncio.to_thread(pg_cluster.start)

        async def recorded() -> bool:
            return _job(url, job)[0] == "succeeded"
        await wait_for(recorded, timeout=60)
    finally:
        worker.stop()
        await asyncio.gather(running, return_exceptions=True)
        await app.close_async()
