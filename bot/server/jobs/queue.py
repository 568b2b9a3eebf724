"""From stored deliveries to handled jobs: a dispatcher, a per-pull-request scheduler, workers.

The dispatcher is woken after each intake commit; it reads `received` rows in order, parses and
classifies them (the JSON work the intake never does), records the outcome and hands jobs to the
scheduler. The scheduler keeps one lane per key (repository + pull request): a lane runs one job at
a time, so work for a pull request is serialised, and a job for a newer head supersedes the jobs of
the lane that have not started (they are marked `superseded`). `workers` lanes run at once.

The scheduler holds only ids, keys and heads; a worker reads the body again when the job starts,
so a backlog costs rows on disk, not parsed payloads in memory.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bot import telemetry
from bot.events.jobs import Handler, Job, ReviewResult, stored_payload, supersedes
from bot.loops.pause import pause
from bot.server import logging as log
from bot.server.jobs.dispatch import BIG_BODY, decide_in_turn
from bot.server.metrics import Metrics
from bot.store.model import DeliveryDecision, DeliveryStore, Queued, Received, Started, StoreUnavailable

logger = log.get("queue")
BATCH = 64
FINISH_PATIENCE = 120.0  # seconds a finished job waits for the store to record its end
MAX_INTERRUPTIONS = 5  # attempts in a row the store may fail while it answers, before the job fails


@dataclass(order=True)
class _Entry:
    seq: int
    delivery_id: str = field(compare=False)
    event: str = field(compare=False)
    key: str = field(compare=False)
    head_sha: str | None = field(compare=False)


class JobQueue:
    def __init__(self, store: DeliveryStore, handler: Handler, metrics: Metrics, workers: int = 4) -> None:
        self.store = store
        self.handler = handler
        self.metrics = metrics
        self.workers = workers
        self._lanes: dict[str, list[_Entry]] = {}  # key → jobs not started, by seq
        self._scheduled: set[str] = set()  # keys waiting in `_ready` or running
        self._ready: asyncio.Queue[str] = asyncio.Queue()  # keys with a job to start, in turn
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self.running = 0

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Pick up what a previous run left: interrupted jobs, queued jobs, unread deliveries."""
        interrupted = await self.store.recover()
        if interrupted:
            logger.info("requeued jobs interrupted by a restart", extra={"count": interrupted})
        for row in await self.store.queued():
            await self._schedule(_entry(row))
        self._tasks.append(asyncio.create_task(self._dispatch_loop(), name="dispatcher"))
        self._tasks += [asyncio.create_task(self._worker(), name=f"worker-{i}") for i in range(self.workers)]
        self.wake()

    async def stop(self) -> None:
        """Cancel everything; a job cut off stays `running` and is requeued at the next start."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    def wake(self) -> None:
        self._wake.set()

    def depth(self) -> int:
        return sum(len(lane) for lane in self._lanes.values())

    # --- dispatcher ---------------------------------------------------------------------------

    async def _dispatch_loop(self) -> None:
        while True:
            await pause(0)  # a cancellation a round swallowed still ends the loop (bot/loops/pause.py)
            await self._wake.wait()
            self._wake.clear()
            try:
                while await self._dispatch():
                    pass
            except Exception:  # the store failed; the rows stay `received` for the next wake-up
                logger.exception("dispatching failed; will retry on the next delivery")
                await pause(1)
                self.wake()

    async def _dispatch(self) -> int:
        """Decide and record a batch of received rows, schedule their jobs; how many were taken."""
        seqs: dict[str, int] = {}

        async def decide(row: Received) -> DeliveryDecision:
            seqs[row.delivery_id] = row.seq
            return await decide_in_turn(row, self.metrics, self.store)

        decisions = await self.store.claim(BATCH, decide)
        for decision in decisions:
            delivery_id, state, c, _ = decision.classified
            if state == "queued" and c is not None and c.key is not None:
                await self._schedule(_Entry(seqs[delivery_id], delivery_id, decision.event, c.key, c.head_sha))
        return len(decisions)

    # --- scheduler ----------------------------------------------------------------------------

    async def _schedule(self, entry: _Entry) -> None:
        lane = self._lanes.setdefault(entry.key, [])
        later = [e for e in lane if e.seq > entry.seq and _newer_head(entry, e)]
        if later:  # a later delivery for another head is already waiting: this one is stale
            await supersede(self.store, self.metrics, [entry], later[0])
            return
        stale = [e for e in lane if e.seq < entry.seq and _newer_head(e, entry)]
        for old in stale:
            lane.remove(old)
        bisect.insort(lane, entry)
        if stale:
            await supersede(self.store, self.metrics, stale, entry)
        if entry.key not in self._scheduled:
            self._scheduled.add(entry.key)
            self._ready.put_nowait(entry.key)

    # --- workers ------------------------------------------------------------------------------

    async def _worker(self) -> None:
        while True:
            await pause(0)  # a cancellation a job swallowed still ends the worker (bot/loops/pause.py)
            key = await self._ready.get()
            lane = self._lanes.get(key)
            if lane:
                entry = lane.pop(0)
                try:
                    await self._run(entry)
                except Exception:  # the store failed: the row keeps its state, a restart picks it up
                    logger.exception("job could not be run", extra={"delivery": entry.delivery_id})
            if self._lanes.get(key):
                self._ready.put_nowait(key)
            else:
                self._lanes.pop(key, None)
                self._scheduled.discard(key)

    async def _run(self, entry: _Entry) -> None:
        self.running += 1
        try:
            await run_job(self.store, self.handler, self.metrics, entry.delivery_id, entry.event)
        finally:
            self.running -= 1


class Waiting(Protocol):
    """A job waiting for a worker, as either queue holds it (the PostgreSQL queue's `Queued` rows,
    this queue's entries)."""

    @property
    def delivery_id(self) -> str: ...
    @property
    def event(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def head_sha(self) -> str | None: ...


async def supersede(store: DeliveryStore, metrics: Metrics, stale: Sequence[Waiting], by: Waiting) -> None:
    """Finish waiting jobs that a newer delivery for the same pull request makes moot: stored as
    superseded (only while still queued), logged and counted, by either queue."""
    error = f"superseded by delivery {by.delivery_id} (head {by.head_sha})"
    await store.finish([w.delivery_id for w in stale], "superseded", error, from_state="queued")
    for w in stale:
        logger.info("job superseded", extra={"delivery": w.delivery_id, "by": by.delivery_id, "key": w.key})
        metrics.jobs.inc(event=w.event, outcome="superseded")


async def run_job(store: DeliveryStore, handler: Handler, metrics: Metrics, delivery_id: str, event: str) -> bool:
    """Start a queued delivery's job, run the handler, record the end; False when it was not queued.

    A handler's exception marks the job failed (a redelivery retries it); a cancellation (the
    process stopping) leaves the row `running`, for `recover` to put back in the queue. The store
    going away under the job (StoreUnavailable) is not the job's failure: it waits for the store,
    however long, and runs again in place as its next attempt, which carries on from what the
    interrupted one recorded and posted (bot.pipeline.journal). Only a store that answers and yet
    fails the job MAX_INTERRUPTIONS times in a row fails it, so that nothing loops for ever. A
    review the handler returns is recorded beside the job's `done`: one that failed makes the
    delivery a failure to the console and /metrics, and redeliverable, though its job ran to its end."""
    started = await store.start(delivery_id)
    interruptions = 0
    while started is not None:
        if await _attempt(store, handler, metrics, started, event, interruptible=interruptions < MAX_INTERRUPTIONS):
            return True
        interruptions += 1
        metrics.jobs.inc(event=event, outcome="interrupted")
        await _wait_for_store(store)
        started = await store.restart(delivery_id)
    return False


async def _attempt(store: DeliveryStore, handler: Handler, metrics: Metrics, started: Started, event: str, *,
                   interruptible: bool) -> bool:
    """One attempt of a started job; False when the store went away under it (the row is left
    running) and the job may wait for it."""
    delivery_id = started.delivery_id
    fields = log.fields(delivery=delivery_id, event=event, action=started.action,
                        repo=started.repo, pr=started.pr_number, attempt=started.attempt)
    began = time.monotonic()
    with telemetry.resumed(started.traceparent, "job", delivery=delivery_id, event=event, action=started.action,
                           repo=started.repo, pr=started.pr_number, attempt=started.attempt) as span, \
            telemetry.observing(metrics):
        logger.debug("job started", extra=fields)
        if started.queued_at is not None and started.attempt == 1:
            metrics.queue_wait(max(0.0, time.time() - started.queued_at), event)
        return await _attempt_body(store, handler, metrics, started, event, fields, began, span,
                                   interruptible=interruptible)


async def _attempt_body(store: DeliveryStore, handler: Handler, metrics: Metrics, started: Started, event: str,
                        fields: dict[str, object], began: float, span: telemetry.Span, *, interruptible: bool) -> bool:
    delivery_id = started.delivery_id
    delivery = log.current_delivery.set(delivery_id)
    try:
        body = started.body  # a big one is read on a thread, as the dispatcher reads it
        payload = await asyncio.to_thread(stored_payload, body) if len(body) > BIG_BODY else stored_payload(body)
        job = Job(started.delivery_id, started.event, started.action, payload,
                  started.installation_id, started.repo, started.pr_number, started.head_sha,
                  started.attempt)
        result = await handler(job)
    except StoreUnavailable as exc:
        if not interruptible:
            await _failed(store, metrics, delivery_id, event, exc, fields)
            return True
        logger.warning("job interrupted: the store is unavailable; it runs again once the store is back",
                       extra={**fields, "error": log.error_text(exc)})
        return False
    except Exception as exc:
        await _failed(store, metrics, delivery_id, event, exc, fields)
    else:
        review = result if isinstance(result, ReviewResult) else None
        failed = review is not None and review.kind == "failed"
        # A failed review is waited for, as a failed job is: a redelivery right after must find it failed.
        await _finish(store, delivery_id, "done", review=review, wait=failed)
        done = {**fields, "seconds": round(time.monotonic() - began, 3)}
        if review is not None:
            done.update(review=review.kind, reason=review.reason)
            span.set(review=review.kind, reason=review.reason)
        if failed:
            logger.warning("job done; its review failed (%s)", review.reason if review else "", extra=done)
        else:
            logger.info("job done", extra=done)
        metrics.jobs.inc(event=event, outcome="done")
        if review is not None:
            metrics.review(event, review.kind, review.reason)
    finally:
        log.current_delivery.reset(delivery)
        metrics.job_duration.observe(time.monotonic() - began, event=event)
    return True


async def _failed(store: DeliveryStore, metrics: Metrics, delivery_id: str, event: str, exc: Exception,
                  fields: dict[str, object]) -> None:
    error = log.error_text(exc)
    telemetry.fail_current("the job failed")
    await _finish(store, delivery_id, "failed", error)
    logger.warning("job failed: %s", error, extra=fields)
    metrics.jobs.inc(event=event, outcome="failed")


async def _wait_for_store(store: DeliveryStore) -> None:
    """Until the store answers again (a cancellation, the process stopping, ends the wait)."""
    delay = 0.5
    while True:
        try:
            await store.ping()
            return
        except StoreUnavailable:
            await pause(delay)
            delay = min(delay * 2, 5.0)


async def _finish(store: DeliveryStore, delivery_id: str, state: str, error: str | None = None,
                  wait: bool = True, patience: float = FINISH_PATIENCE, review: ReviewResult | None = None) -> None:
    """Record a job's end, waiting for a store that is away for a moment (PostgreSQL restarting):
    the work is done, and a row left `running` would be run again."""
    delay, deadline = 0.5, time.monotonic() + patience
    while True:
        try:
            await store.finish([delivery_id], state, error, wait=wait, review=review)
            return
        except StoreUnavailable:
            if time.monotonic() + delay > deadline:
                raise
            logger.warning("the store is unreachable; recording the job's end again shortly",
                           extra={"delivery": delivery_id})
            await pause(delay)
            delay = min(delay * 2, 5.0)


def _entry(row: Queued) -> _Entry:
    return _Entry(row.seq, row.delivery_id, row.event, row.key, row.head_sha)


def _newer_head(old: _Entry, new: _Entry) -> bool:
    """`new` makes `old` pointless (bot.events.jobs.supersedes: the rule both queues share)."""
    return supersedes(old.head_sha, new.head_sha)
