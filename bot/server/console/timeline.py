"""What a delivery's job did, call by call, for the console's timeline.

The pipeline is not asked to report: every outgoing HTTP call of a job (GitHub's API and the model
providers share the server's one `aiohttp` session) is observed by an aiohttp `TraceConfig`, and
the job's start and end by a wrapper around the job handler. Calls are attributed to the job by
the delivery id the queue sets in `log.current_delivery` (a context variable, so concurrent jobs
never mix). At the end of the job the events are written to `delivery_timeline`, one row per
attempt, through `TimelineStore`; rows whose delivery was pruned are pruned with it.

Only the method, the host's role (GitHub or a model), the path (never the query: some providers
carry a key there), the status and the duration are kept: never a header or a body.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bot.server import logging as log
from bot.server.group_commit import GroupCommit

SCHEMA = ("CREATE TABLE IF NOT EXISTS delivery_timeline (delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL, "
          "body TEXT NOT NULL, PRIMARY KEY (delivery_id, attempt))")
MAX_CALLS = 500  # per attempt: a runaway job still gets a bounded row
PRUNE_EVERY = 100  # writes between sweeps of rows whose delivery is gone


@dataclass
class Call:
    kind: str  # "github" or "model"
    method: str
    host: str
    path: str
    status: int  # 0: no answer
    seconds: float
    at: float
    detail: dict[str, Any] | None = None  # a check run's outcome or a review's decision (see _detail)


@dataclass
class Attempt:
    """One run of a delivery's job: when it started and ended, its outcome and its calls."""

    delivery_id: str
    attempt: int
    started: float
    finished: float | None = None
    outcome: str = "running"
    error: str | None = None
    calls: list[Call] = field(default_factory=list)
    dropped: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Attempt:
        calls = [Call(**c) for c in data.pop("calls", [])]
        return cls(**data, calls=calls)

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for call in self.calls:
            found[call.kind] = found.get(call.kind, 0) + 1
        return found


class TimelineStore:
    """The `delivery_timeline` table in the server's SQLite file, on a connection of its own."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._writes = 0
        # Jobs that end together share one transaction (the writes of a backlog's drain batch up).
        self._writer: GroupCommit[Attempt, None] = GroupCommit(self._write_batch)

    async def open(self) -> None:
        def connect() -> sqlite3.Connection:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
            # One row per job: under WAL, NORMAL syncs at checkpoints, not at each commit; a row lost to
            # a power cut costs a timeline, never a delivery (those are the store's, synced).
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(SCHEMA)
            return db
        self._db = await asyncio.to_thread(connect)
        self._writer.start()

    async def close(self) -> None:
        await self._writer.close()
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    async def _run(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        def locked() -> Any:
            with self._lock:
                if self._db is None:
                    raise RuntimeError("the timeline store is not open")
                return work(self._db)
        return await asyncio.to_thread(locked)

    async def write(self, attempt: Attempt) -> None:
        await self._writer.submit(attempt)

    async def _write_batch(self, attempts: list[Attempt]) -> list[None]:
        rows = [(a.delivery_id, a.attempt, json.dumps(a.to_json())) for a in attempts]
        before = self._writes
        self._writes += len(rows)
        sweep = self._writes // PRUNE_EVERY != before // PRUNE_EVERY
        await self._run(lambda db: _write(db, rows, sweep))
        return [None] * len(rows)

    async def attempts(self, delivery_id: str) -> list[Attempt]:
        rows = await self._run(lambda db: db.execute(
            "SELECT body FROM delivery_timeline WHERE delivery_id = ? ORDER BY attempt", (delivery_id,)).fetchall())
        return [Attempt.from_json(json.loads(body)) for (body,) in rows]

    async def prune(self) -> int:
        """Delete the rows of deliveries the retention pruner removed; returns how many."""
        return await self._run(_prune)


def _write(db: sqlite3.Connection, rows: list[tuple[str, int, str]], sweep: bool) -> None:
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany("INSERT INTO delivery_timeline (delivery_id, attempt, body) VALUES (?, ?, ?) "
                       "ON CONFLICT (delivery_id, attempt) DO UPDATE SET body = excluded.body", rows)
        if sweep:
            _prune(db)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _prune(db: sqlite3.Connection) -> int:
    return db.execute("DELETE FROM delivery_timeline WHERE delivery_id NOT IN "
                      "(SELECT delivery_id FROM deliveries)").rowcount


class TimelineRecorder:
    """Collects the calls of running jobs and writes each attempt when its job ends."""

    def __init__(self, store: TimelineStore, github_api_url: str, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.github = urlsplit(github_api_url).netloc  # host and port: test doubles share a host
        self.clock = clock
        self.running: dict[str, Attempt] = {}

    def trace_config(self) -> aiohttp.TraceConfig:
        """Observes every request of the session it is given to."""
        trace = aiohttp.TraceConfig()
        trace.on_request_start.append(self._on_start)
        trace.on_request_chunk_sent.append(self._on_chunk)
        trace.on_request_end.append(self._on_end)
        trace.on_request_exception.append(self._on_exception)
        return trace

    async def _on_start(self, session: Any, context: Any, params: aiohttp.TraceRequestStartParams) -> None:
        context.began = time.monotonic()

    async def _on_chunk(self, session: Any, context: Any, params: aiohttp.TraceRequestChunkSentParams) -> None:
        """Keeps the body of a check-run or review write to GitHub (nothing else's), bounded."""
        if not _kept_body(params.method, str(params.url)) or urlsplit(str(params.url)).netloc != self.github:
            return
        body = getattr(context, "body", b"")
        if len(body) < MAX_BODY:
            context.body = body + params.chunk[:MAX_BODY - len(body)]

    async def _on_end(self, session: Any, context: Any, params: aiohttp.TraceRequestEndParams) -> None:
        self._add(context, params.method, params.url, params.response.status)

    async def _on_exception(self, session: Any, context: Any, params: aiohttp.TraceRequestExceptionParams) -> None:
        self._add(context, params.method, params.url, 0)

    def _add(self, context: Any, method: str, url: Any, status: int) -> None:
        attempt = self.running.get(log.current_delivery.get() or "")
        if attempt is None:
            return
        if len(attempt.calls) >= MAX_CALLS:
            attempt.dropped += 1
            return
        parts = urlsplit(str(url))
        host = parts.hostname or ""
        seconds = time.monotonic() - getattr(context, "began", time.monotonic())
        kind = "github" if parts.netloc == self.github else "model"
        detail = _detail(parts.path, getattr(context, "body", b"")) if kind == "github" else None
        attempt.calls.append(Call(kind, method, host, parts.path, status, round(seconds, 4), self.clock(), detail))

    def wrap(self, handler: Callable[[Any], Awaitable[None]]) -> Callable[[Any], Awaitable[None]]:
        """The job handler, its attempt recorded: started, each call, finished with its outcome."""
        async def recorded(job: Any) -> None:
            attempt = Attempt(job.delivery_id, job.attempt, self.clock())
            self.running[job.delivery_id] = attempt
            try:
                await handler(job)
            except BaseException as exc:
                attempt.outcome, attempt.error = "failed", log.error_text(exc)
                raise
            else:
                attempt.outcome = "done"
            finally:
                attempt.finished = self.clock()
                self.running.pop(job.delivery_id, None)
                try:
                    await self.store.write(attempt)
                except Exception:  # the timeline is for reading; it never fails the job
                    logger.exception("the delivery timeline could not be written",
                                     extra={"delivery": job.delivery_id})
        return recorded


logger = log.get("timeline")
MAX_BODY = 256 * 1024
MAX_TEXT = 20_000  # characters of a summary or a review body kept
MAX_COMMENTS = 100


def _kept_body(method: str, url: str) -> bool:
    path = urlsplit(url).path.rstrip("/")
    return method in ("POST", "PATCH") and ("/check-runs" in path or path.endswith("/reviews"))


def _detail(path: str, body: bytes) -> dict[str, Any] | None:
    """What a check-run write or a review says (pure): the check run's status, conclusion, title
    and summary; the review's event (its decision), body and the place of each comment."""
    if not body:
        return None
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    if path.rstrip("/").endswith("/reviews"):
        comments = [c for c in data.get("comments") or [] if isinstance(c, dict)]
        return {"review": str(data.get("event") or "COMMENT"), "body": str(data.get("body") or "")[:MAX_TEXT],
                "comments": [{"path": str(c.get("path", "")), "line": c.get("line"),
                              "body": str(c.get("body", ""))[:500]} for c in comments[:MAX_COMMENTS]],
                "commentCount": len(comments)}
    given = data.get("output")
    output: dict[str, Any] = given if isinstance(given, dict) else {}
    return {"checkRun": str(data.get("status") or ""), "conclusion": data.get("conclusion"),
            "title": str(output.get("title") or "")[:500], "summary": str(output.get("summary") or "")[:MAX_TEXT]}
