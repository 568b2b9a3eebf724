"""Jobs on PostgreSQL, across any number of processes, on procrastinate (not a queue of our own).

Two roles, in one process (`reviewer serve`) or apart (`serve --no-workers`, `worker`):
- the dispatcher (web): woken after each intake commit, it claims `received` rows (SKIP LOCKED, so
  two web processes never take the same row), classifies them and, for each pull request that got
  a job, defers one procrastinate job for its key (`owner/repo#N`) with `lock=key` — procrastinate
  runs at most one job of a lock at a time, across every worker — and `queueing_lock=key`, so at
  most one job a pull request waits (a second deferral while one waits is refused, and the waiting
  one will find the new delivery anyway);
- the workers: a procrastinate worker runs `review_key(key)`, which first puts back what a dead
  worker left `running` for that key (it holds the key's lock: nothing else can be running it),
  supersedes queued deliveries whose head is not the newest queued head (a job for a head that is
  no longer the pull request's head is dropped), then runs what is left, in order.

A worker killed mid-job stops sending heartbeats; every worker sweeps for stalled jobs (workers
silent for `stalled_after` seconds) every `sweep_every` seconds and retries them, so the job runs
again within a minute, as attempt 2 (the timings are settings: bot/server/jobs/queue_timings.py): the pipeline then takes up the check run the first attempt started
(found by its external id) instead of starting a second one. A living worker is never taken for a
dead one: its heartbeat (bot.server.jobs.pg_worker) beats from its start to the end of its last job,
through failures and a graceful stop; a sweep declares nobody dead before its own process has been
in touch with the database for `stalled_after` (after an outage every heartbeat is old); and a job is
retried only while it is still held by a silent worker, checked and changed in one statement (two
sweeps that both saw it stalled retry it once, and never once it runs again elsewhere). The sweep
also re-defers keys whose rows are queued with no job waiting (a dispatcher that died between its
commit and its deferral). SIGTERM stops taking jobs and waits up to `grace` seconds for those
running, beating all along; a job still running then is cancelled and its delivery put back to
`queued` for another worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import procrastinate
from procrastinate.exceptions import AlreadyEnqueued, UniqueViolation
from procrastinate.job_context import JobContext

from bot.events.jobs import Handler, newest_head, supersedes
from bot.loops.pause import pause
from bot.server import logging as log
from bot.server.jobs.dispatch import decide_in_turn
from bot.server.jobs.pg_worker import Heartbeat, ReviewerWorker
from bot.server.jobs.queue import BATCH, run_job, supersede
from bot.server.jobs.queue_timings import PRODUCTION, QueueTimings
from bot.server.metrics import Metrics
from bot.store.model import DeliveryDecision, DeliveryStore, Queued, Received
from bot.store.postgres import database
from bot.store.postgres.jobqueue import COUNT_JOBS, FAIL_STALLED, RETRY_STALLED, WAITING_KEYS

logger = log.get("queue")
TASK = "reviewer.review_key"
COUNT_TTL = 1.0  # seconds the queue's counts (depth, running) are kept before they are read again
STOP_CHECK = 1.0  # seconds between a stop's looks at whether the worker has ended (see stop)


def make_app(url: str) -> procrastinate.App:
    """The procrastinate app on the same database (its own small pool, built as the stores' pool is,
    so that it too recovers promptly after a restart of PostgreSQL; statements not prepared; named
    `reviewer queue` in pg_stat_activity)."""
    connector = procrastinate.PsycopgConnector(conninfo=url, min_size=1, max_size=4, timeout=5.0,
                                               kwargs={"prepare_threshold": None, "application_name": "reviewer queue"},
                                               pool_factory=database.pool)
    return procrastinate.App(connector=connector)


def stale(rows: list[Queued]) -> tuple[list[Queued], list[Queued]]:
    """(to run, to supersede): the head of the latest row that has one wins (a comment queued
    after a push names no head and changes nothing); rows for another head are dropped."""
    newest = newest_head(r.head_sha for r in rows)
    keep = [r for r in rows if not supersedes(r.head_sha, newest)]
    return keep, [r for r in rows if supersedes(r.head_sha, newest)]


class ProcrastinateQueue:
    """The JobQueue interface (start, stop, wake, depth, running) over procrastinate."""

    def __init__(self, url: str, store: DeliveryStore, handler: Handler | None, metrics: Metrics, workers: int,
                 *, dispatch: bool, work: bool, timings: QueueTimings = PRODUCTION) -> None:
        self.store, self.handler, self.metrics, self.workers = store, handler, metrics, workers
        self.dispatch, self.work, self.timings = dispatch, work, timings
        self.app = make_app(url)
        self.app.task(name=TASK, retry=False, pass_context=True)(self._review_key)
        self._jobs: set[int] = set()  # procrastinate's ids of the jobs this process runs now
        self.heartbeat = Heartbeat(self.app, timings.heartbeat, lambda: sorted(self._jobs), retry=timings.retry_beat)
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._worker: asyncio.Task | None = None
        self._current: ReviewerWorker | None = None  # procrastinate's worker the task runs now
        self._stopping = False
        self._running = 0  # jobs this process runs now
        self._waiting = self._doing = 0  # procrastinate's jobs table, as last counted
        self._counted_at = float("-inf")
        self._counting: asyncio.Task | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        await self.app.open_async()
        if self.dispatch:
            self._tasks.append(asyncio.create_task(self._dispatch_loop(), name="dispatcher"))
            self.wake()
        if self.work:
            self._worker = asyncio.create_task(self._run_worker(), name="procrastinate-worker")
            self._tasks.append(asyncio.create_task(self._sweep_loop(), name="stalled-sweep"))

    async def stop(self) -> None:
        """Stop dispatching and sweeping; let the worker finish its jobs (the grace), then close."""
        self._stopping = True
        if self._counting is not None:
            self._tasks.append(self._counting)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._worker is not None:
            self._worker.cancel()  # procrastinate's graceful stop: no new job, running ones finish
            while not (await asyncio.wait({self._worker}, timeout=STOP_CHECK))[0]:
                # On Python 3.11 a cancellation can be lost (asyncio.wait_for, in the pool's wait for a
                # connection during the worker's start-up queries, may swallow it): the worker then ran
                # on and this stop waited for ever. Its own stop is graceful too; asked until it ends.
                if self._current is not None:
                    self._current.stop()
            await asyncio.gather(self._worker, return_exceptions=True)
        await self.app.close_async()

    def wake(self) -> None:
        self._wake.set()

    def depth(self) -> int:
        """Jobs waiting, across every process (procrastinate's table, counted at most every
        COUNT_TTL seconds: /metrics on a web process, which runs no job, shows them too)."""
        self._recount()
        return self._waiting

    @property
    def running(self) -> int:
        """Jobs running: this process's when it has workers, else every worker's (the table's)."""
        if self.work:
            return self._running
        self._recount()
        return self._doing

    def _recount(self) -> None:
        """Refresh the counts in the background when they are older than COUNT_TTL; the caller
        (a /metrics scrape) reads the last counts and never waits for the database."""
        stale = time.monotonic() - self._counted_at >= COUNT_TTL
        if stale and not self._stopping and (self._counting is None or self._counting.done()):
            self._counting = asyncio.get_running_loop().create_task(self._count(), name="job-count")

    async def _count(self) -> None:
        try:
            row = await self.app.connector.execute_query_one_async(COUNT_JOBS, task=TASK)
        except Exception as exc:  # the store is away: keep the last counts, try at the next scrape
            logger.warning("could not count the queued jobs", extra={"error": log.error_text(exc)})
            return
        self._waiting, self._doing = int(row["todo"]), int(row["doing"])
        self._counted_at = time.monotonic()

    # --- dispatcher ---------------------------------------------------------------------------

    async def _dispatch_loop(self) -> None:
        while True:
            await pause(0)  # a cancellation a round swallowed still ends the loop (bot/loops/pause.py)
            await self._wake.wait()
            self._wake.clear()
            try:
                while decisions := await self.store.claim(BATCH, self._decide):
                    keys = {c.key for _, state, c, _ in (d.classified for d in decisions)
                            if state == "queued" and c is not None and c.key}
                    await self.defer_all(keys)
            except Exception:  # the store is away: the rows stay `received` for the next pass
                logger.exception("dispatching failed; trying again in a second")
                await pause(1)
                self.wake()

    async def _decide(self, row: Received) -> DeliveryDecision:
        return await decide_in_turn(row, self.metrics, self.store)

    async def defer_all(self, keys: set[str]) -> list[str]:
        """A job for each key that has none waiting; the keys it made one for. A key whose job
        waits is skipped: its rows were committed before this look, and that job reads its rows
        only once it starts, so it finds them (a job already running may have read its rows:
        its key gets a waiting one). One look instead of a refused deferral per such key."""
        if not keys:
            return []
        rows = await self.app.connector.execute_query_all_async(WAITING_KEYS, task=TASK, keys=sorted(keys))
        return [key for key in sorted(keys - {row["queueing_lock"] for row in rows}) if await self.defer(key)]

    async def defer(self, key: str) -> bool:
        """One job for the key unless one already waits; True when this call made it."""
        try:
            await self.app.configure_task(TASK, lock=key, queueing_lock=key).defer_async(key=key)
        except AlreadyEnqueued:
            return False
        return True

    # --- workers ------------------------------------------------------------------------------

    async def _run_worker(self) -> None:
        """procrastinate's worker (with our heartbeat), started again whenever it ends before the
        process stops: after a failure (PostgreSQL restarting), or a stop it asked itself."""
        self.app.perform_import_paths()
        while not self._stopping:
            worker = self._current = ReviewerWorker(
                self.app, self.heartbeat, concurrency=self.workers, wait=True, install_signal_handlers=False,
                shutdown_graceful_timeout=self.timings.grace, stalled_worker_timeout=self.timings.stalled_after,
                delete_jobs="successful", name="reviewer")
            try:
                await worker.run()
            except asyncio.CancelledError:
                raise
            except Exception:
                # procrastinate may end a cancelled run with the store's error instead of the
                # cancellation (PostgreSQL unreachable while stopping): never start it again then
                if self._stopping:
                    return
                logger.exception("the job worker stopped on an error; starting it again")
            else:
                if not self._stopping:
                    logger.warning("the job worker stopped on its own; starting it again")
            await pause(1)

    async def _review_key(self, context: JobContext, key: str) -> None:
        """procrastinate's task: every queued delivery of one pull request, holding its lock."""
        mine = set() if context.job.id is None else {context.job.id}  # the heartbeat claims these again should our row be pruned
        self._jobs |= mine
        try:
            await self._review_rows(key)
        finally:
            self._jobs -= mine

    async def _review_rows(self, key: str) -> None:
        assert self.handler is not None, "a dispatch-only queue runs no job"
        interrupted = await self.store.recover(key)
        if interrupted:
            logger.info("took up jobs a stopped worker left", extra={"key": key, "count": interrupted})
        while rows := await self.store.queued(key):
            keep, dropped = stale(rows)
            if dropped:
                await supersede(self.store, self.metrics, dropped, next(r for r in reversed(keep) if r.head_sha))
            for row in keep:
                await self._run(row)

    async def _run(self, row: Queued) -> None:
        assert self.handler is not None
        self._running += 1
        try:
            await run_job(self.store, self.handler, self.metrics, row.delivery_id, row.event)
        except asyncio.CancelledError:  # stopped past the grace period: hand the job back
            with contextlib.suppress(Exception):
                await asyncio.shield(self._hand_back(row))
            raise
        finally:
            self._running -= 1

    async def _hand_back(self, row: Queued) -> None:
        await self.store.recover(row.key)
        await self.defer(row.key)

    # --- the sweep ----------------------------------------------------------------------------

    async def _sweep_loop(self) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:
                logger.exception("the stalled-job sweep failed; trying again")
            await pause(self.timings.sweep_every)

    async def sweep(self) -> None:
        """Retry the jobs of dead workers; defer keys left with queued rows and no job."""
        if self.heartbeat.steady_for() >= self.timings.stalled_after:  # else our own view of the others is stale
            await self.retry_stalled()
        for key in await self.defer_all(set(await self.store.open_keys())):
            logger.info("deferred a job for deliveries left without one", extra={"key": key})
        await self._count()

    async def retry_stalled(self) -> None:
        """Each job a silent worker holds back in the queue, if it still is when retried (the
        sweep's first step, which it takes only once its own process is steady)."""
        connector, after = self.app.connector, self.timings.stalled_after
        stalled = await self.app.job_manager.get_stalled_jobs(task_name=TASK, seconds_since_heartbeat=after)
        for job in stalled:
            where = {"job": job.id, "after": after}
            try:
                retried = await connector.execute_query_all_async(RETRY_STALLED, **where)
            except UniqueViolation:  # a job for the key already waits (queueing lock): it takes the work up
                retried = await connector.execute_query_all_async(FAIL_STALLED, **where)
            if retried:
                logger.warning("retrying a job whose worker stopped answering", extra={"job": job.id, "key": job.lock})


Factory = Callable[[], ProcrastinateQueue]
