"""procrastinate's worker, made to outlive a PostgreSQL that goes away for a moment and to stay
alive, to the other workers, for as long as it runs a job.

procrastinate (3.10) keeps a worker alive with a heartbeat side task that ends on its first
failed update and is never started again (no periodic task means nothing watches the side
tasks), and that is cancelled as soon as a stop begins, before the jobs in flight have finished.
Either way the worker goes on running jobs while the others take it for dead after `stalled_after`
seconds (bot/server/jobs/queue_timings.py), and their stalled-job sweep runs those jobs a second time. So the heartbeat here is our
own (procrastinate's is set to a day, never due), for the whole of `run()`: from registration to
the end of the last job of a graceful stop. A failed beat is logged and tried again a second
later (sooner when the heartbeat is shorter), never the end of beating; a beat that finds the worker's row gone (another worker that
started while this one's beats failed pruned it) puts it back and claims its running jobs again.

`Heartbeat.steady_for()` says how long this process has been in touch with the database without a
failed beat: the sweep declares nobody dead before it has itself been in touch for `stalled_after`
(after an outage every heartbeat is old, the living workers' too).

A failed fetch of the next job (PostgreSQL away) ends procrastinate's job loop, which would then
wait for the running jobs and abort them; here it is logged and the next poll tries again. And a
job's end that procrastinate could not record (PostgreSQL away as the job ended) left the job
`doing` under a living worker, its lock held for ever (no sweep retries a living worker's job, and
every later job of its pull request waited behind it): here it is recorded again until it is, or,
once the worker is stopping, for STOPPING_PATIENCE seconds (the process then exits, its heartbeat
stops, and another worker's sweep retries the job).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import procrastinate
from procrastinate import job_context, jobs, retry
from procrastinate.exceptions import ConnectorException
from procrastinate.worker import Worker

from bot.loops.pause import pause
from bot.server import logging as log
from bot.store.postgres.database import unreachable
from bot.store.postgres.jobqueue import BEAT, RECLAIM, REVIVE

logger = log.get("queue")
NEVER = 86400.0  # procrastinate's own heartbeat interval: ours beats instead
STOPPING_PATIENCE = 10.0  # seconds a stopping worker tries to record a job's end


class Heartbeat:
    """Beats every `every` seconds for the worker `worker_id()` names (None: not registered); a
    failed beat is tried again after `retry` seconds."""

    def __init__(self, app: procrastinate.App, every: float, running: Callable[[], list[int]],
                 clock: Callable[[], float] = time.monotonic, *, retry: float = 1.0) -> None:
        self.app, self.every, self.running, self.clock, self.retry = app, every, running, clock, retry
        self._steady_since: float | None = None  # since when every beat succeeded

    def steady_for(self) -> float:
        """Seconds since the first of an unbroken run of successful beats (0: the last failed)."""
        return 0.0 if self._steady_since is None else self.clock() - self._steady_since

    async def beat_while(self, worker_id: Callable[[], int | None]) -> None:
        """Beat until cancelled; a failure is logged and tried again soon, never the end."""
        while True:
            current = worker_id()
            if current is None:  # registering, or unregistered at the end of a stop
                await pause(0.2)
                continue
            try:
                await self.beat(current)
            except Exception as exc:
                if self._steady_since is not None:
                    logger.warning("the worker's heartbeat failed; trying again",
                                   extra={"worker": current, "error": log.error_text(exc)})
                self._steady_since = None
                await pause(self.retry)
                continue
            if self._steady_since is None:
                self._steady_since = self.clock()
            await pause(self.every)

    async def beat(self, worker: int) -> None:
        connector = self.app.connector
        if await connector.execute_query_all_async(BEAT, worker=worker):
            return
        jobs = self.running()
        if not jobs:  # nothing of ours can be taken for a dead worker's
            return
        logger.warning("the worker's row was pruned while its heartbeat failed; claiming its jobs again",
                       extra={"worker": worker, "jobs": jobs})
        await connector.execute_query_async(REVIVE, worker=worker)
        await connector.execute_query_async(RECLAIM, worker=worker, jobs=jobs)


class ReviewerWorker(Worker):
    """procrastinate's Worker with our heartbeat around `run()` and a job fetch that survives a
    failure. Options are procrastinate's (`update_heartbeat_interval` is ours to set: NEVER)."""

    def __init__(self, app: procrastinate.App, heartbeat: Heartbeat, **options: Any) -> None:
        super().__init__(app=app, update_heartbeat_interval=NEVER, **options)
        self.heartbeat = heartbeat

    async def run(self) -> None:
        beating = asyncio.create_task(self.heartbeat.beat_while(lambda: self.worker_id), name="heartbeat")
        try:
            await super().run()  # returns once every job has ended and the worker is unregistered
        finally:
            beating.cancel()
            await asyncio.gather(beating, return_exceptions=True)

    async def _fetch_and_process_jobs(self) -> None:
        try:
            await super()._fetch_and_process_jobs()
        except ConnectorException as exc:  # no new job this time; the running ones go on
            logger.warning("could not fetch a job; trying again at the next poll",
                           extra={"error": log.error_text(exc)})

    async def _persist_job_status(self, job: jobs.Job, status: jobs.Status,
                                  retry_decision: retry.RetryDecision | None, context: job_context.JobContext,
                                  job_result: job_context.JobResult | None) -> None:
        delay, waited = 0.5, 0.0
        while True:
            try:
                await super()._persist_job_status(job, status, retry_decision, context, job_result)
                return
            except ConnectorException as exc:
                if not unreachable(exc) or (self._stop_event.is_set() and waited >= STOPPING_PATIENCE):
                    raise
                if not waited:
                    logger.warning("could not record a job's end; trying again",
                                   extra={"job": job.id, "error": log.error_text(exc)})
            await pause(delay)
            waited += delay
            delay = min(delay * 2, 5.0)
