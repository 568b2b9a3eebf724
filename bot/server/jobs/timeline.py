"""What a delivery's job did, call by call: recorded where jobs run, read by the console's timeline.

The pipeline is not asked to report: every outgoing HTTP call of a job (GitHub's API and the model
providers share the server's one `aiohttp` session) is observed by an aiohttp `TraceConfig`, and
the job's start and end by a wrapper around the job handler. Calls are attributed to the job by
the delivery id the queue sets in `log.current_delivery` (a context variable, so concurrent jobs
never mix). At the end of the job the attempt is written to the storage's `TimelineStore`
(bot.store.model: the `delivery_timeline` table, on either backend), one row per attempt; the
retention pruner removes a delivery's rows with it.

Only the method, the host's role (GitHub or a model), the path (never the query: some providers
carry a key there), the status and the duration are kept: never a header, and of bodies only what
a check run or a review posted to GitHub says (`_detail`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiohttp

from bot.events.jobs import ReviewResult
from bot.server import logging as log
from bot.store.model import TimelineEntry, TimelineStore

MAX_CALLS = 500  # per attempt: a runaway job still gets a bounded row
R = TypeVar("R")


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
    review: str | None = None  # what the attempt's review came to (bot.events.jobs.ReviewResult), `failed (reason)`
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


async def read_attempts(store: TimelineStore, delivery_id: str) -> list[Attempt]:
    """A delivery's attempts as the recorder wrote them, oldest first."""
    return [Attempt.from_json(dict(entry.body)) for entry in await store.attempts(delivery_id)]


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
        # each call of a job, at DEBUG: the method, the path (never the query, a header or a body)
        logger.debug("%s call %s %s: %s", kind, method, parts.path, status or "no answer",
                     extra={"call": kind, "method": method, "path": parts.path, "status": status,
                            "seconds": round(seconds, 4)})

    def wrap(self, handler: Callable[[Any], Awaitable[R]]) -> Callable[[Any], Awaitable[R]]:
        """The job handler, its attempt recorded: started, each call, finished with its outcome
        (and its review's, when the handler returns one: bot.events.jobs.ReviewResult)."""
        async def recorded(job: Any) -> R:
            attempt = Attempt(job.delivery_id, job.attempt, self.clock())
            self.running[job.delivery_id] = attempt
            try:
                result = await handler(job)
            except BaseException as exc:
                attempt.outcome, attempt.error = "failed", log.error_text(exc)
                raise
            else:
                attempt.outcome = "done"
                if isinstance(result, ReviewResult):
                    attempt.review = f"{result.kind} ({result.reason})" if result.reason else result.kind
                return result
            finally:
                attempt.finished = self.clock()
                self.running.pop(job.delivery_id, None)
                try:
                    await self.store.write(TimelineEntry(attempt.delivery_id, attempt.attempt, attempt.to_json()),
                                           wait=False)
                except Exception:  # the timeline is for reading; it never fails the job
                    logger.exception("the delivery timeline could not be written",
                                     extra={"delivery": job.delivery_id})
        return recorded


logger = log.get("timeline")
MAX_BODY = 256 * 1024
MAX_TEXT = 20_000  # characters of a summary or a review body kept
# The hidden comments a post carries (the delivery it belongs to, bot.pipeline.journal): GitHub does
# not show them, and neither does the console
_HIDDEN = re.compile(r"<!--.*?-->\n?", re.S)
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
        return {"review": str(data.get("event") or "COMMENT"),
                "body": _HIDDEN.sub("", str(data.get("body") or ""))[:MAX_TEXT],
                "comments": [{"path": str(c.get("path", "")), "line": c.get("line"),
                              "body": str(c.get("body", ""))[:500]} for c in comments[:MAX_COMMENTS]],
                "commentCount": len(comments)}
    given = data.get("output")
    output: dict[str, Any] = given if isinstance(given, dict) else {}
    return {"checkRun": str(data.get("status") or ""), "conclusion": data.get("conclusion"),
            "title": str(output.get("title") or "")[:500], "summary": str(output.get("summary") or "")[:MAX_TEXT]}
