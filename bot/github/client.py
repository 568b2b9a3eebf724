"""The app's HTTP client for GitHub: gidgethub underneath, with retries, bounds and one write at a time.

- `GitHubApp` lives as long as the process: the aiohttp session, the app's identity (JWT and the
  installation-token cache), the retry policy, the per-installation write locks and the call counts.
- `GitHubClient` (from `GitHubApp.installation(id)`) makes calls as one installation.

Every HTTP attempt goes through one retry loop (bot/github/transport.py: 5xx answers, timeouts,
connection errors and rate limits, bounded per call). A write whose repeat would do harm is not
sent again after a 5xx or no answer when its caller says so (`post(..., resend_unanswered=False)`):
creating the check run looks first whether GitHub made it (`checks.start_check_run`). Writes of
one installation go out one at a time, as GitHub asks of content-creating requests. `sleep` and
`clock` are injectable so that tests observe the waits without waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

import aiohttp
import gidgethub
import gidgethub.aiohttp

from bot.store.coordination import LocalCoordination

from .auth import AppAuth, Auth, TokenAuth
from .coordination import Coordination, wait_for_writes
from .errors import GitHubError
from .transport import DEFAULT_POLICY, LIMIT_SEEN, RESEND_UNANSWERED, OnCall, RetryPolicy, Sleep, Transport, calling

log = logging.getLogger("reviewer.github")

DEFAULT_API_URL = "https://api.github.com"
ACCEPT = "application/vnd.github+json"
HEADERS = {"x-github-api-version": "2022-11-28"}
TOKEN_ROUTE = "/app/installations/{installation_id}/access_tokens"

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
                 base_url: str = DEFAULT_API_URL, policy: RetryPolicy = DEFAULT_POLICY, sleep: Sleep = asyncio.sleep,
                 clock: Callable[[], float] = time.time, on_call: OnCall | None = None,
                 requester: str = "reviewer-github-app", rng: random.Random | None = None,
                 coordination: Coordination | None = None, auth: Auth | None = None) -> None:
        """`auth`: how calls are authenticated, when not by the app's key (`app_id`, `private_key`)."""
        self.coordination: Coordination = coordination or LocalCoordination()
        self.auth: Auth = auth or AppAuth(app_id, private_key, clock=clock, coordination=self.coordination)
        self._clock, self._sleep = clock, sleep
        self.calls: Counter[tuple[str, str, int]] = Counter()  # (method, route, status) -> HTTP attempts
        self._on_call = on_call
        self.transport = Transport(session, requester=requester, base_url=base_url, policy=policy, sleep=sleep,
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
        with calling(name):
            try:
                return await self.transport.getitem(expand(route, url_vars), {}, accept=ACCEPT, jwt=self.auth.jwt(),
                                                    extra_headers=dict(HEADERS))
            except gidgethub.HTTPException as exc:
                raise _error("GET", name, exc) from None

    async def installation_token(self, installation_id: int) -> str:
        with calling(TOKEN_ROUTE):
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
        token = RESEND_UNANSWERED.set(resend_unanswered)
        try:
            return await self._write("POST", route, url_vars, data)
        finally:
            RESEND_UNANSWERED.reset(token)

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
                seen = LIMIT_SEEN.set(limits.append)
                try:
                    return await send(url, {}, data=data, accept=ACCEPT, oauth_token=token,
                                      extra_headers=dict(HEADERS))
                finally:
                    LIMIT_SEEN.reset(seen)
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
            with calling(GRAPHQL_ROUTE):
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
            with calling(name):
                try:
                    return await call(token)
                except gidgethub.HTTPException as exc:
                    if exc.status_code == 401 and not refreshed:
                        log.info("GitHub %s %s: token refused (401); fetching a new one", method, name)
                        await self.app.auth.forget(self.installation_id, token)
                        refreshed = True
                        continue
                    raise _error(method, name, exc) from None
