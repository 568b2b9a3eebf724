"""Every HTTP attempt to GitHub, in one retry loop: gidgethub's aiohttp API underneath.

Retried: 5xx answers, timeouts, connection errors and rate limits. The primary limit
(`x-ratelimit-remaining: 0`) waits until `x-ratelimit-reset`; a secondary limit honours
`retry-after` or else backs off from a minute (GitHub's advice); other failures back off
exponentially with jitter. Bounded by a number of attempts and a total wait per call: a wait
beyond the bound fails the call at once (`GitHubUnavailable`, with `retry_at` when known). The
calling client says, through context variables, which route a call is (its template, for spans,
logs and metrics), whether a write may be sent again after no answer, and whom to tell of a limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
import gidgethub.aiohttp

from bot import telemetry

from .errors import GitHubUnavailable

log = logging.getLogger("reviewer.github")

OnCall = Callable[[str, str, int], None]  # (method, route template, status; 0 when nothing answered)
Sleep = Callable[[float], Awaitable[None]]

ROUTE: ContextVar[str] = ContextVar("github_route", default="")
# False while a write must not be sent again after a 5xx or no answer: GitHub may have carried it out.
RESEND_UNANSWERED: ContextVar[bool] = ContextVar("github_resend_unanswered", default=True)
# Told the time until which GitHub asked for no more writes (a retry-after), to share it.
LIMIT_SEEN: ContextVar[Callable[[float], None] | None] = ContextVar("github_limit_seen", default=None)


@dataclass(frozen=True)
class RetryPolicy:
    """How hard one call tries: attempts, waits and the timeout of each attempt."""

    attempts: int = 5  # per call, the first one included
    max_wait: float = 120.0  # seconds a call may spend waiting between attempts, in total
    base_delay: float = 1.0  # first backoff; doubles per attempt, with jitter
    max_delay: float = 30.0  # cap of one backoff
    timeout: float = 30.0  # seconds per attempt
    secondary_wait: float = 60.0  # secondary limit without retry-after: GitHub says wait at least a minute


DEFAULT_POLICY = RetryPolicy()


@contextlib.contextmanager
def calling(route: str) -> Iterator[None]:
    """Name the route template of the calls made inside (gidgethub's API sees only URLs)."""
    token = ROUTE.set(route)
    try:
        yield
    finally:
        ROUTE.reset(token)


def _mentions_rate_limit(body: bytes) -> bool:
    try:
        message = json.loads(body).get("message", "")
    except (ValueError, AttributeError):
        return False
    return isinstance(message, str) and ("rate limit" in message.lower() or "abuse" in message.lower())


class Transport(gidgethub.aiohttp.GitHubAPI):
    """gidgethub's aiohttp API, each HTTP attempt wrapped in the retry loop."""

    def __init__(self, session: aiohttp.ClientSession, *, requester: str, base_url: str, policy: RetryPolicy,
                 sleep: Sleep, clock: Callable[[], float], rng: random.Random, on_call: OnCall,
                 oauth_token: str | None = None) -> None:
        super().__init__(session, requester, base_url=base_url, oauth_token=oauth_token)
        self._session, self._requester = session, requester
        self._policy, self._sleep, self._clock, self._rng, self._on_call = policy, sleep, clock, rng, on_call

    def with_token(self, token: str) -> Transport:
        """The same transport speaking as `token`: gidgethub's GraphQL call takes its credential
        from the instance, and the shared transport has none (REST calls pass theirs per call)."""
        return Transport(self._session, requester=self._requester, base_url=self.base_url, policy=self._policy,
                          sleep=self._sleep, clock=self._clock, rng=self._rng, on_call=self._on_call,
                          oauth_token=token)

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    async def _request(self, method: str, url: str, headers: Mapping[str, str], body: bytes = b"") -> tuple[int, Mapping[str, str], bytes]:
        route = ROUTE.get() or urlsplit(url).path
        # One span per call, its retries included; the route's template, never its values or headers
        with telemetry.span(f"github {method} {route}", http__request__method=method, http_ROUTE=route) as span:
            status, answer_headers, data = await self._attempts(method, url, route, headers, body, span)
            span.set(http__response__status_code=status)
            if status >= 400:
                span.fail(f"GitHub answered {status}")
            return status, answer_headers, data

    async def _attempts(self, method: str, url: str, route: str, headers: Mapping[str, str], body: bytes,
                        span: telemetry.Span) -> tuple[int, Mapping[str, str], bytes]:
        waited, attempt = 0.0, 0
        while True:
            attempt += 1
            try:
                async with asyncio.timeout(self._policy.timeout):
                    status, answer_headers, data = await super()._request(method, url, headers, body)
            except (TimeoutError, aiohttp.ClientError) as exc:
                self._on_call(method, route, 0)
                status, retry_at = 0, None
                wait, why = self._backoff(attempt), f"no answer ({type(exc).__name__})"
            else:
                self._on_call(method, route, status)
                decision = self._retry_decision(status, answer_headers, data, attempt)
                if decision is None:
                    span.set(attempts=attempt)
                    return status, answer_headers, data
                wait, why, retry_at = decision
                if retry_at is not None and (tell := LIMIT_SEEN.get()) is not None:
                    tell(retry_at)
            if (status == 0 or status >= 500) and not RESEND_UNANSWERED.get():
                raise GitHubUnavailable(method, route, status, f"{why}; not sent again: it may have been carried out")
            if attempt >= self._policy.attempts:
                raise GitHubUnavailable(method, route, status, f"{why}; gave up after {attempt} attempts", retry_at=retry_at)
            if waited + wait > self._policy.max_wait:
                raise GitHubUnavailable(method, route, status, f"{why}; waiting {wait:.0f}s more would pass the "
                                        f"{self._policy.max_wait:.0f}s bound", retry_at=retry_at)
            log.warning("GitHub %s %s: %s; attempt %d, retrying in %.1fs", method, route, why, attempt, wait)
            await self._sleep(wait)
            waited += wait

    def _backoff(self, attempt: int) -> float:
        delay = min(self._policy.max_delay, self._policy.base_delay * 2 ** (attempt - 1))
        return delay / 2 + self._rng.uniform(0, delay / 2)  # "equal jitter": spread out, never near zero

    def _retry_decision(self, status: int, headers: Mapping[str, str], body: bytes,
                        attempt: int) -> tuple[float, str, float | None] | None:
        """(wait, reason, retry_at) when the answer is worth another attempt, else None."""
        if status >= 500:
            return self._backoff(attempt), f"GitHub answered {status}", None
        if status not in (403, 429):
            return None
        retry_after = headers.get("retry-after", "").strip()
        if retry_after.isdigit():
            wait = float(retry_after)
            return wait, f"secondary rate limit (retry-after {retry_after}s)", self._clock() + wait
        if headers.get("x-ratelimit-remaining") == "0" and headers.get("x-ratelimit-reset", "").isdigit():
            reset = float(headers["x-ratelimit-reset"])
            return max(reset - self._clock(), 1.0), "rate limit exhausted until x-ratelimit-reset", reset
        if status == 429 or _mentions_rate_limit(body):
            return self._policy.secondary_wait * 2 ** (attempt - 1), "secondary rate limit", None
        return None  # a refusal (permissions, protected branch), not a limit
