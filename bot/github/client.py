"""The app's HTTP client for GitHub: gidgethub underneath, with retries, bounds and one write at a time.

- `GitHubApp` lives as long as the process: the aiohttp session, the app's identity (JWT and the
  installation-token cache), the retry policy, the per-installation write locks and the call counts.
- `GitHubClient` (from `GitHubApp.installation(id)`) makes calls as one installation.

Every HTTP attempt is retried by one loop (`_Transport._request`) on 5xx answers, timeouts,
connection errors and rate limits: the primary limit (`x-ratelimit-remaining: 0`) waits until
`x-ratelimit-reset`, a secondary limit honours `retry-after` or else backs off from a minute
(GitHub's advice); other failures back off exponentially with jitter. Retries are bounded by a
number of attempts and a total wait per call: a wait beyond the bound fails the call at once
(`GitHubUnavailable`, with `retry_at` when known) instead of sleeping for an hour. A write whose
repeat would do harm is not sent again after a 5xx or no answer when its caller says so
(`post(..., resend_unanswered=False)`): creating the check run looks first whether GitHub made it
(`checks.start_check_run`). Writes of one
installation go out one at a time, as GitHub asks of content-creating requests. `sleep` and
`clock` are injectable so that tests observe the waits without waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import aiohttp
import gidgethub
import gidgethub.aiohttp

from bot import telemetry
from bot.store.coordination import LocalCoordination

from .auth import AppAuth, Auth, TokenAuth
from .coordination import Coordination, wait_for_writes
from .errors import GitHubError, GitHubUnavailable

log = logging.getLogger("reviewer.github")

DEFAULT_API_URL = "https://api.github.com"
ACCEPT = "application/vnd.github+json"
HEADERS = {"x-github-api-version": "2022-11-28"}
TOKEN_ROUTE = "/app/installations/{installation_id}/access_tokens"

OnCall = Callable[[str, str, int], None]  # (method, route template, status; 0 when nothing answered)
Sleep = Callable[[float], Awaitable[None]]

_route: ContextVar[str] = ContextVar("github_route", default="")
# False while a write must not be sent again after a 5xx or no answer: GitHub may have carried it out.
_resend_unanswered: ContextVar[bool] = ContextVar("github_resend_unanswered", default=True)
# Told the time until which GitHub asked for no more writes (a retry-after), to share it.
_limit_seen: ContextVar[Callable[[float], None] | None] = ContextVar("github_limit_seen", default=None)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # per call, the first one included
    max_wait: float = 120.0  # seconds a call may spend waiting between attempts, in total
    base_delay: float = 1.0  # first backoff; doubles per attempt, with jitter
    max_delay: float = 30.0  # cap of one backoff
    timeout: float = 30.0  # seconds per attempt
    secondary_wait: float = 60.0  # secondary limit without retry-after: GitHub says wait at least a minute


def expand(route: str, url_vars: Mapping[str, Any]) -> str:
    """Fill a route template: `{name}` escapes every reserved character, `{+name}` keeps `/` (file paths)."""
    def fill(match: re.Match) -> str:
        keep_slash, name = match.group(1), match.group(2)
        if name not in url_vars:
            raise KeyError(f"{route}: no value for {{{name}}}")
        return quote(str(url_vars[name]), safe="/" if keep_slash else "")
    return re.sub(r"\{(\+?)(\w+)\}", fill, route)


def route_name(route: str) -> str:
    """The template as GitHub's REST description writes it (for metrics and logs)."""
    return route.replace("{+", "{")


@contextlib.contextmanager
def _calling(route: str) -> Iterator[None]:
    token = _route.set(route)
    try:
        yield
    finally:
        _route.reset(token)


def _mentions_rate_limit(body: bytes) -> bool:
    try:
        message = json.loads(body).get("message", "")
    except (ValueError, AttributeError):
        return False
    return isinstance(message, str) and ("rate limit" in message.lower() or "abuse" in message.lower())


class _Transport(gidgethub.aiohttp.GitHubAPI):
    """gidgethub's aiohttp API, each HTTP attempt wrapped in the retry loop."""

    def __init__(self, session: aiohttp.ClientSession, *, requester: str, base_url: str, policy: RetryPolicy,
                 sleep: Sleep, clock: Callable[[], float], rng: random.Random, on_call: OnCall,
                 oauth_token: str | None = None) -> None:
        super().__init__(session, requester, base_url=base_url, oauth_token=oauth_token)
        self._session, self._requester = session, requester
        self._policy, self._sleep, self._clock, self._rng, self._on_call = policy, sleep, clock, rng, on_call

    def with_token(self, token: str) -> _Transport:
        """The same transport speaking as `token`: gidgethub's GraphQL call takes its credential
        from the instance, and the shared transport has none (REST calls pass theirs per call)."""
        return _Transport(self._session, requester=self._requester, base_url=self.base_url, policy=self._policy,
                          sleep=self._sleep, clock=self._clock, rng=self._rng, on_call=self._on_call,
                          oauth_token=token)

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    async def _request(self, method: str, url: str, headers: Mapping[str, str], body: bytes = b"") -> tuple[int, Mapping[str, str], bytes]:
        route = _route.get() or urlsplit(url).path
        # One span per call, its retries included; the route's template, never its values or headers
        with telemetry.span(f"github {method} {route}", http__request__method=method, http__route=route) as span:
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
                if retry_at is not None and (tell := _limit_seen.get()) is not None:
                    tell(retry_at)
            if (status == 0 or status >= 500) and not _resend_unanswered.get():
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


def _error(method: str, route: str, exc: gidgethub.HTTPException) -> GitHubError:
    return GitHubError(method, route, int(exc.status_code), str(exc))


GRAPHQL_ROUTE = "/graphql"


def graphql_url(base_url: str) -> str:
    """GitHub's GraphQL endpoint for a REST root: `https://api.github.com/graphql`, and for
    GitHub Enterprise Server (`https://HOST/api/v3`) `https://HOST/api/graphql`."""
    root = base_url.rstrip("/")
    if root.endswith("/api/v3"):
        return root[: -len("/v3")] + "/graphql"
    return root + "/graphql"


def _graphql_error(exc: gidgethub.GraphQLException) -> GitHubError:
    """gidgethub's GraphQL errors as ours: a status where GitHub gave one (200 for a query that
    GitHub answered with `errors`), and GitHub's messages."""
    status = int(getattr(exc, "status_code", 200) or 200)
    errors = (exc.response or {}).get("errors") if isinstance(exc.response, dict) else None
    message = "; ".join(str(e.get("message")) for e in errors if isinstance(e, dict))[:500] if errors else str(exc)
    return GitHubError("POST", GRAPHQL_ROUTE, status, message or type(exc).__name__)


class GitHubApp:
    """The app as a whole. One per process; `installation(id)` gives a client per installation."""

    def __init__(self, session: aiohttp.ClientSession, *, app_id: int | str, private_key: str,
                 base_url: str = DEFAULT_API_URL, policy: RetryPolicy = RetryPolicy(), sleep: Sleep = asyncio.sleep,
                 clock: Callable[[], float] = time.time, on_call: OnCall | None = None,
                 requester: str = "reviewer-github-app", rng: random.Random | None = None,
                 coordination: Coordination | None = None, auth: Auth | None = None) -> None:
        """`auth`: how calls are authenticated, when not by the app's key (`app_id`, `private_key`)."""
        self.coordination: Coordination = coordination or LocalCoordination()
        self.auth: Auth = auth or AppAuth(app_id, private_key, clock=clock, coordination=self.coordination)
        self._clock, self._sleep = clock, sleep
        self.calls: Counter[tuple[str, str, int]] = Counter()  # (method, route, status) -> HTTP attempts
        self._on_call = on_call
        self.transport = _Transport(session, requester=requester, base_url=base_url, policy=policy, sleep=sleep,
                                    clock=clock, rng=rng or random.Random(), on_call=self._count)

    def _count(self, method: str, route: str, status: int) -> None:
        self.calls[(method, route, status)] += 1
        if self._on_call is not None:
            self._on_call(method, route, status)

    def installation(self, installation_id: int) -> GitHubClient:
        return GitHubClient(self, installation_id)

    @classmethod
    def with_token(cls, session: aiohttp.ClientSession, token: str, *, base_url: str = DEFAULT_API_URL,
                   requester: str = "reviewer-github-action", **kwargs: Any) -> GitHubClient:
        """A client that calls as `token` (GitHub Actions' `GITHUB_TOKEN`): the same retries, bounds
        and one write at a time as the app's, without the app's key."""
        app = cls(session, app_id="", private_key="", base_url=base_url, requester=requester,
                  auth=TokenAuth(token), **kwargs)
        return app.installation(0)

    @property
    def graphql_url(self) -> str:
        return graphql_url(self.transport.base_url)

    async def app_info(self) -> dict:
        """`GET /app` with the app's JWT: `slug` (the bot is `<slug>[bot]`), `id`, `owner`, permissions."""
        return await self._get_as_app("/app", {})

    async def repo_installation(self, owner: str, repo: str) -> int | None:
        """The id of the app's installation that reaches `owner/repo`; None when none does (GitHub's
        404 also hides a repository that does not exist, or that the app may not see)."""
        try:
            found = await self._get_as_app("/repos/{owner}/{repo}/installation", {"owner": owner, "repo": repo})
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        return int(found["id"])

    async def _get_as_app(self, route: str, url_vars: Mapping[str, Any]) -> Any:
        """A GET with the app's JWT, for the few routes that take it instead of an installation token."""
        name = route_name(route)
        with _calling(name):
            try:
                return await self.transport.getitem(expand(route, url_vars), {}, accept=ACCEPT, jwt=self.auth.jwt(),
                                                    extra_headers=dict(HEADERS))
            except gidgethub.HTTPException as exc:
                raise _error("GET", name, exc) from None

    async def installation_token(self, installation_id: int) -> str:
        with _calling(TOKEN_ROUTE):
            try:
                return await self.auth.installation_token(self.transport, installation_id)
            except gidgethub.HTTPException as exc:
                raise _error("POST", TOKEN_ROUTE, exc) from None


class GitHubClient:
    """Calls as one installation. Routes are GitHub's templates (`/repos/{owner}/{repo}/pulls/{pull_number}`)."""

    def __init__(self, app: GitHubApp, installation_id: int) -> None:
        self.app = app
        self.installation_id = installation_id

    async def get(self, route: str, url_vars: Mapping[str, Any] | None = None, *,
                  params: Mapping[str, Any] | None = None, accept: str = ACCEPT) -> Any:
        url = self._url(route, url_vars, params)
        return await self._as_installation("GET", route, lambda token: self.app.transport.getitem(
            url, {}, accept=accept, oauth_token=token, extra_headers=dict(HEADERS)))

    async def get_all(self, route: str, url_vars: Mapping[str, Any] | None = None, *,
                      params: Mapping[str, Any] | None = None, limit: int | None = None,
                      items_key: str | None = None) -> list:
        """Every item of a paginated list, following `Link: rel="next"`, stopping at `limit` items.

        `items_key` names the list inside an object answer (`check_runs`); None for a bare list.
        """
        url = self._url(route, url_vars, {"per_page": 100, **(params or {})})

        async def fetch(token: str) -> list:
            items: list = []
            pages = self.app.transport.getiter(url, {}, accept=ACCEPT, oauth_token=token,
                                               extra_headers=dict(HEADERS), iterable_key=items_key)
            async with contextlib.aclosing(pages):
                async for item in pages:
                    items.append(item)
                    if limit is not None and len(items) >= limit:
                        break
            return items
        return await self._as_installation("GET", route, fetch)

    async def post(self, route: str, url_vars: Mapping[str, Any] | None = None, *, data: Any,
                   resend_unanswered: bool = True) -> Any:
        """`resend_unanswered=False`: after a 5xx or no answer, raise `GitHubUnavailable` instead
        of sending again, for a caller that can look whether GitHub carried it out (a duplicate
        would do harm). Rate-limit answers are still waited out and retried: nothing was done."""
        token = _resend_unanswered.set(resend_unanswered)
        try:
            return await self._write("POST", route, url_vars, data)
        finally:
            _resend_unanswered.reset(token)

    async def patch(self, route: str, url_vars: Mapping[str, Any] | None = None, *, data: Any) -> Any:
        return await self._write("PATCH", route, url_vars, data)

    async def put(self, route: str, url_vars: Mapping[str, Any] | None = None, *, data: Any) -> Any:
        return await self._write("PUT", route, url_vars, data)

    async def _write(self, method: str, route: str, url_vars: Mapping[str, Any] | None, data: Any) -> Any:
        url = self._url(route, url_vars, None)
        senders: dict[str, Callable[..., Awaitable[Any]]] = {
            "POST": self.app.transport.post, "PATCH": self.app.transport.patch, "PUT": self.app.transport.put}
        send = senders[method]

        async def call(token: str) -> Any:
            # content-creating requests one at a time per installation, across processes; a
            # retry-after that any of them was given holds the others' writes too
            async with self.app.coordination.write_lock(self.installation_id):
                await wait_for_writes(self.app.coordination, self.installation_id, self.app._clock, self.app._sleep)
                limits: list[float] = []
                seen = _limit_seen.set(limits.append)
                try:
                    return await send(url, {}, data=data, accept=ACCEPT, oauth_token=token,
                                      extra_headers=dict(HEADERS))
                finally:
                    _limit_seen.reset(seen)
                    if limits:
                        await self.app.coordination.hold_writes(self.installation_id, max(limits))
        return await self._as_installation(method, route, call)

    async def graphql(self, query: str, *, write: bool = False, **variables: Any) -> Any:
        """A GraphQL query (`write`: a mutation, sent one at a time with the installation's other
        writes) through gidgethub's GraphQL call, retried as every call is; its `data`. GitHub's
        errors, those it answers with 200 included, are GitHubError."""
        endpoint = self.app.graphql_url

        async def call(token: str) -> Any:
            api = self.app.transport.with_token(token)
            if not write:
                return await api.graphql(query, endpoint=endpoint, **variables)
            async with self.app.coordination.write_lock(self.installation_id):
                await wait_for_writes(self.app.coordination, self.installation_id, self.app._clock, self.app._sleep)
                return await api.graphql(query, endpoint=endpoint, **variables)

        refreshed = False
        while True:
            token = await self.app.installation_token(self.installation_id)
            with _calling(GRAPHQL_ROUTE):
                try:
                    return await call(token)
                except gidgethub.GraphQLAuthorizationFailure:
                    if refreshed:
                        raise GitHubError("POST", GRAPHQL_ROUTE, 401, "Bad credentials") from None
                    await self.app.auth.forget(self.installation_id, token)
                    refreshed = True
                except gidgethub.GraphQLException as exc:
                    raise _graphql_error(exc) from None
                except gidgethub.HTTPException as exc:
                    raise _error("POST", GRAPHQL_ROUTE, exc) from None

    def _url(self, route: str, url_vars: Mapping[str, Any] | None, params: Mapping[str, Any] | None) -> str:
        url = expand(route, url_vars or {})
        return f"{url}?{urlencode(params)}" if params else url

    async def _as_installation(self, method: str, route: str, call: Callable[[str], Awaitable[Any]]) -> Any:
        """Run `call(token)`; on a 401 drop the token, fetch a new one and run it once more."""
        name = route_name(route)
        refreshed = False
        while True:
            token = await self.app.installation_token(self.installation_id)
            with _calling(name):
                try:
                    return await call(token)
                except gidgethub.HTTPException as exc:
                    if exc.status_code == 401 and not refreshed:
                        log.info("GitHub %s %s: token refused (401); fetching a new one", method, name)
                        await self.app.auth.forget(self.installation_id, token)
                        refreshed = True
                        continue
                    raise _error(method, name, exc) from None
