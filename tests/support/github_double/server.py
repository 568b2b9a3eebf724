"""The GitHub double: GitHub's REST API for the operations the app uses, over real HTTP on loopback.

Every request goes through the same steps as on GitHub: route (by the REST description), fault
injection, authentication (the app JWT on `/app` routes and on `GET /repos/{owner}/{repo}/installation`,
installation tokens elsewhere), validation against the operation's schemas, repository access, then
the handler. Every call is logged with its
status; every request that breaks the description and every answer that breaks GitHub's response
schema is a *violation*, which the `github` fixture asserts empty at teardown.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

import jwt
from aiohttp import web

from . import (  # noqa: F401 - register handlers
    routes_apps,
    routes_checks,
    routes_git,
    routes_issues,
    routes_pulls,
    routes_reactions,
)
from .api import HANDLERS, ApiError, Context, Reply
from .faults import Fault, Faults, bad_credentials, primary_rate_limit, secondary_rate_limit, server_error
from .graphql import GraphQLCall, graphql_path
from .graphql import answer as graphql_answer
from .manifest_flow import ManifestFlow
from .model import App, Installation, Repo, User, person
from .openapi import Operation, RestDescription
from .render import Renderer
from .routes_apps import JWT_OPERATIONS
from .webhooks import WebhookSender

# Operations GitHub serves without any credential: the manifest flow's code is the credential.
UNAUTHENTICATED = frozenset({"apps/create-from-manifest"})

TOKEN_LIFETIME = 3600  # installation tokens last one hour
JWT_MAX_LIFETIME = 600  # an app JWT may expire at most 10 minutes ahead
RATE_LIMIT = 5000


@lru_cache(maxsize=1)
def rest_description() -> RestDescription:
    return RestDescription()


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    route: str | None  # "METHOD /template", None when no operation matched
    query: dict[str, str]
    status: int


@dataclass
class _Token:
    installation: Installation
    expires_at: float


class GitHubDouble(WebhookSender):
    """`api_prefix="/api/v3"` serves the API under that path, as GitHub Enterprise Server does
    (`GITHUB_API_URL=https://ghe.example.com/api/v3`): `url` is then the API's root, `origin` the
    server's, and a request outside the prefix is a violation."""

    def __init__(self, api_prefix: str = "") -> None:
        self.api_prefix = api_prefix.rstrip("/")
        self.description = rest_description()
        self.ids = itertools.count(1_000_001)
        self.apps: dict[int, App] = {}
        self.installations: dict[int, Installation] = {}
        self.repos: dict[str, Repo] = {}
        self.tokens: dict[str, _Token] = {}
        self.calls: list[Call] = []
        self.graphql_calls: list[GraphQLCall] = []  # GraphQL is outside the REST description: its own log
        self.violations: list[str] = []
        self.faults = Faults()
        self.tree_entry_limit = 100_000  # GitHub truncates recursive trees beyond 100,000 entries (or 7 MB)
        self.url = ""  # the API's root: the origin, then the prefix
        self.origin = ""
        self.render = Renderer("http://127.0.0.1")
        self.max_concurrent_writes = 0  # the most non-GET requests the double was handling at once
        self._writes_in_flight = 0
        self._used: dict[str, int] = {}
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.manifest_flow = ManifestFlow(self)  # GitHub's web form for registering an app, and its code

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> str:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        self.manifest_flow.routes(app)  # GitHub's web host, outside the API
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.origin = f"http://{host}:{port}"
        self.url = self.origin + self.api_prefix
        self.render = Renderer(self.url, self.origin) if self.api_prefix else Renderer(self.url)
        return self.url

    async def close(self) -> None:
        self._closing.set()  # wakes handlers held by a delay fault
        if self._runner is not None:
            await self._runner.cleanup()

    def next_id(self) -> int:
        return next(self.ids)

    # --- building state ----------------------------------------------------------------------

    def add_app(self, public_key_pem: str, *, slug: str = "reviewer", webhook_secret: str = "webhook-secret",
                owner: str = "reviewer-org") -> App:
        app_id = self.next_id()
        app = App(app_id, slug, slug.capitalize(), User(owner, self.next_id(), "Organization"), public_key_pem,
                  webhook_secret, User(f"{slug}[bot]", self.next_id(), "Bot"))
        self.apps[app_id] = app
        return app

    def add_repo(self, full_name: str, *, default_branch: str = "main", private: bool = False) -> Repo:
        owner, name = full_name.split("/")
        repo = Repo(self.next_id(), person(owner), name, default_branch, self.ids, private)
        self.repos[full_name] = repo
        return repo

    def fork(self, repo: Repo, owner: str) -> Repo:
        """`owner`'s fork of `repo`: the same commits and branches, from then on its own."""
        fork = self.add_repo(f"{owner}/{repo.name}", default_branch=repo.default_branch)
        fork.commits.update(repo.commits)
        fork.branches.update(repo.branches)
        return fork

    def install(self, app: App, *repos: Repo, account: str | None = None) -> Installation:
        """Install `app` on `repos` (all of one account: by default the first repository's owner)."""
        owner = person(account) if account else (repos[0].owner if repos else person("octo-org"))
        inst = Installation(self.next_id(), app, owner, {r.full_name for r in repos})
        self.installations[inst.id] = inst
        return inst

    def issue_token(self, inst: Installation) -> tuple[str, str]:
        token = "ghs_" + secrets.token_urlsafe(27)[:36]
        expires = time.time() + TOKEN_LIFETIME
        self.tokens[token] = _Token(inst, expires)
        return token, datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def expire_tokens(self) -> None:
        """Every installation token issued so far expires now (the next use answers 401)."""
        for token in self.tokens.values():
            token.expires_at = 0.0

    # --- observing ---------------------------------------------------------------------------

    def count(self, route: str | None = None, *, status: int | None = None) -> int:
        """How many calls the app made (to one route, with one answer status)."""
        if route is not None:
            self._known_route(route)
        return sum(1 for c in self.calls if (route is None or c.route == route) and (status is None or c.status == status))

    def take_violations(self) -> list[str]:
        """Hand over the violations recorded so far (for a test that provokes one on purpose)."""
        found, self.violations = self.violations, []
        return found

    # --- faults ------------------------------------------------------------------------------

    def _known_route(self, route: str | None) -> str | None:
        if route is not None and route not in self.description.by_route:
            raise ValueError(f"{route!r} is no route of the REST description; known: {sorted(self.description.by_route)}")
        return route

    def fail(self, route: str | None, *, status: int = 502, times: int = 1, applied: bool = False) -> Fault:
        """The next `times` requests answered `status`; with `applied`, each is carried out first,
        as when GitHub did the work and its answer was lost on the way."""
        return self.faults.add(server_error(self._known_route(route), status, times, applied))

    def secondary_rate_limit(self, route: str | None, *, retry_after: int | None = 60, times: int = 1,
                             status: int = 403) -> Fault:
        return self.faults.add(secondary_rate_limit(self._known_route(route), retry_after, times, status))

    def primary_rate_limit(self, route: str | None, *, reset_at: int | None = None, times: int = 1,
                           status: int = 403) -> Fault:
        """`x-ratelimit-remaining: 0` with `x-ratelimit-reset` at `reset_at` (default: a minute from now)."""
        fault = primary_rate_limit(self._known_route(route), 60, times, status)
        if reset_at is not None:
            fault.headers["x-ratelimit-reset"] = str(reset_at)
        return self.faults.add(fault)

    def unauthorized(self, route: str | None, *, times: int = 1) -> Fault:
        """A 401 "Bad credentials", as for a token that expired or was revoked."""
        return self.faults.add(bad_credentials(self._known_route(route), times))

    def delay(self, route: str | None, seconds: float, *, times: int = 1) -> Fault:
        """The next `times` requests held `seconds` (or until the fault's `release()`), then served."""
        return self.faults.add(Fault(self._known_route(route), None, times, delay=seconds))

    # --- the HTTP edge -----------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        if request.method == "GET":
            return await self._serve(request)
        self._writes_in_flight += 1
        self.max_concurrent_writes = max(self.max_concurrent_writes, self._writes_in_flight)
        try:
            return await self._serve(request)
        finally:
            self._writes_in_flight -= 1

    async def _serve(self, request: web.Request) -> web.Response:
        raw_path = request.raw_path.split("?", 1)[0]
        query = {k: request.query.getall(k)[-1] for k in request.query.keys()}
        if raw_path == graphql_path(self.api_prefix):
            return await self._graphql(request)
        if self.api_prefix:
            if not raw_path.startswith(self.api_prefix + "/"):
                self.violations.append(f"{request.method} {raw_path}: outside the API root {self.api_prefix}/")
                return self._respond(request, None, raw_path, query, None, Reply(ApiError(404, "Not Found").body(), 404))
            raw_path = raw_path[len(self.api_prefix):]
        matched = self.description.match(request.method, raw_path)
        if matched is None:
            self.violations.append(f"{request.method} {raw_path}: no operation of the REST description matches")
            return self._respond(request, None, raw_path, query, None, Reply(ApiError(404, "Not Found").body(), 404))
        op, path_params = matched
        fault = self.faults.take(op.route)
        if fault is not None:
            await self._pause(fault.delay, fault.released)
            if fault.status is not None and not fault.applied:
                return self._respond(request, op, raw_path, query, None, Reply(fault.body(), fault.status, dict(fault.headers)))
        bucket = None
        try:
            app, inst = (None, None) if op.operation_id in UNAUTHENTICATED else self._authenticate(request, op)
            bucket = f"installation:{inst.id}" if inst else f"app:{app.id}" if app else None
            params, data, problems = self.description.check_request(
                op, path_params, {k: request.query.getall(k) for k in request.query.keys()},
                await request.read(), request.headers.get("Content-Type", ""))
            if problems:
                self.violations += [f"{op.route}: {p}" for p in problems]
                raise ApiError(422, "Invalid request.\n\n" + "\n".join(problems))
            repo = self._repository(params, inst) if "owner" in params and inst is not None else None
            handler = HANDLERS.get(op.operation_id)
            if handler is None:
                self.violations.append(f"{op.route}: described, but the double does not serve it yet")
                raise ApiError(501, "Not Implemented by the GitHub double")
            reply = await handler(Context(self, params, data, raw_path, query, app, inst, repo))
            self.violations += [f"{op.route}: {p}" for p in self.description.check_response(op, reply.status, reply.data)]
        except ApiError as exc:
            reply = Reply(exc.body(), exc.status, exc.headers)
        if fault is not None and fault.applied:
            reply = Reply(fault.body(), fault.status, dict(fault.headers))
        return self._respond(request, op, raw_path, query, bucket, reply)

    async def _graphql(self, request: web.Request) -> web.Response:
        """GitHub's GraphQL endpoint (tests/support/github_double/graphql.py), as an installation."""
        if request.method != "POST":
            self.violations.append(f"{request.method} graphql: GitHub's GraphQL takes POST")
            return web.json_response({"message": "Not Found"}, status=404)
        scheme, _, credential = request.headers.get("Authorization", "").partition(" ")
        token = self.tokens.get(credential)
        if scheme.lower() not in ("token", "bearer") or token is None or token.expires_at <= time.time():
            return web.json_response({"message": "Bad credentials", "documentation_url": "https://docs.github.com/graphql"},
                                     status=401)
        status, body = graphql_answer(self, token.installation, await request.read())
        return web.json_response(body, status=status, headers={"x-github-api-version-selected": "2022-11-28"})

    async def _pause(self, seconds: float, released: asyncio.Event) -> None:
        """`seconds`, unless the double closes or the fault is released first."""
        if seconds > 0 and not released.is_set():
            waits = [asyncio.ensure_future(self._closing.wait()), asyncio.ensure_future(released.wait())]
            try:
                await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for wait in waits:
                    wait.cancel()

    def _respond(self, request: web.Request, op: Operation | None, path: str, query: dict[str, str],
                 bucket: str | None, reply: Reply) -> web.Response:
        self.calls.append(Call(request.method, path, op.route if op else None, query, reply.status))
        used = 0
        if bucket is not None:
            used = self._used[bucket] = self._used.get(bucket, 0) + 1
        headers = {
            "x-github-api-version-selected": "2022-11-28",
            "x-github-request-id": secrets.token_hex(8).upper(),
            "x-ratelimit-limit": str(RATE_LIMIT), "x-ratelimit-remaining": str(max(RATE_LIMIT - used, 0)),
            "x-ratelimit-used": str(used), "x-ratelimit-resource": "core",
            "x-ratelimit-reset": str((int(time.time()) // 3600 + 1) * 3600),
            **reply.headers,
        }
        if reply.status == 204:
            return web.Response(status=204, headers=headers)
        return web.Response(status=reply.status, headers=headers, body=json.dumps(reply.data).encode(),
                            content_type="application/json", charset="utf-8")

    def _authenticate(self, request: web.Request, op: Operation) -> tuple[App, Installation | None]:
        scheme, _, credential = request.headers.get("Authorization", "").partition(" ")
        if not credential:
            raise ApiError(401, "Requires authentication")
        if op.template.startswith("/app") or op.operation_id in JWT_OPERATIONS:
            if scheme.lower() != "bearer":
                raise ApiError(401, "A JSON web token could not be decoded")
            return self._verify_jwt(credential), None
        token = self.tokens.get(credential)
        if token is None or token.expires_at <= time.time():
            raise ApiError(401, "Bad credentials")
        return token.installation.app, token.installation

    def _verify_jwt(self, token: str) -> App:
        try:
            issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
            app = self.apps.get(int(issuer))
            if app is None:
                raise ApiError(401, f"Integration not found: 'iss' claim {issuer!r} names no app")
            claims = jwt.decode(token, app.public_key_pem, algorithms=["RS256"],
                                options={"require": ["iat", "exp", "iss"], "verify_iat": False})
        except (jwt.PyJWTError, TypeError, ValueError) as exc:
            raise ApiError(401, f"A JSON web token could not be decoded: {exc}") from None
        now = time.time()
        if claims["iat"] > now + 1:
            raise ApiError(401, "'Issued at' claim ('iat') must be an Integer representing a time in the past.")
        if claims["exp"] > now + JWT_MAX_LIFETIME + 1:
            raise ApiError(401, "'Expiration time' claim ('exp') is too far in the future")
        return app

    def _repository(self, params: dict, inst: Installation | None) -> Repo:
        wanted = f"{params['owner']}/{params['repo']}".lower()  # GitHub ignores case in names
        repo = next((r for name, r in self.repos.items() if name.lower() == wanted), None)
        if repo is None or inst is None or repo.full_name not in inst.repositories:
            raise ApiError(404, "Not Found")  # GitHub hides what a token may not reach
        return repo
