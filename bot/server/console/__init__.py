"""The admin console (docs/operations.md "The admin console"), served at `/console/` by `reviewer serve`.

`setup_console(app, ...)` adds the pages and the static files, where sign-in is served (`reviewer
serve`, with or without workers). The delivery timeline the pages show is written where jobs run
(bot.server.jobs.timeline: a recorder around the job handler and a trace of the shared HTTP
session) into the storage's timeline store. Pages are server-rendered; every one checks the
viewer's permission through the sign-in gate, and shows only the accounts the viewer's roles allow.

    GET  /console/login                     identifier-first sign-in, or the break-glass token
    POST /console/login/token               the break-glass token → a console session
    POST /v1/signin-links                   the break-glass token → a one-time sign-in link (console/links.py)
    GET  /console/login/link?token=…        a one-time sign-in link → a console session
    POST /console/logout
    GET  /console/                          overview (deliveries:read)
    GET  /console/deliveries                list (deliveries:read)
    GET  /console/deliveries/{id}           one delivery and its timeline (deliveries:read)
    POST /console/deliveries/{id}/redeliver (deliveries:write)
    GET  /console/repos/{owner}/{repo}      effective configuration by layer (config:read)
    POST /console/repos/{owner}/{repo}/simulate  plan a pull request, posting nothing (config:write)
    GET  /console/connectors[/{plural}/{name}]  (connectors:read)
    POST /console/connectors/apply          (connectors:write)
    GET  /console/signins                   the sign-in log (connectors:read)
    GET  /console/repos                     the repositories the installations cover (deliveries:read)
    GET  /console/repos/{owner}/{repo}/pulls/{number}  a pull request's reviews and findings
    POST /console/connectors/{plural}/{name}/delete     (connectors:write)
    GET  /console/sessions                  the viewer's sessions (any signed-in viewer; all for sessions:write)
    POST /console/sessions/end              end one (the viewer's own, or any with sessions:write)
    GET  /console/audit                     the audit log, with filters (audit:read)

Any other page under `/console/` answers 404 inside the console's frame (a middleware, so that
pages added after these keep their own routes).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.audit.log import Audit
from bot.auth.store import AuthStore
from bot.connectors.controller import Reconciler
from bot.reviews.memory import ReviewMemory
from bot.server.admin_reload import AdminConfigHolder
from bot.server.console.access import Refused, Viewer, viewer
from bot.server.console.audit import AuditPages
from bot.server.console.connectors import ConnectorPages
from bot.server.console.context import Console
from bot.server.console.deliveries import DeliveryPages
from bot.server.console.links import setup_signin_links
from bot.server.console.login import LoginPages
from bot.server.console.render import STATIC, headers, page
from bot.server.console.repos import RepoPages
from bot.server.console.reviews import ReviewPages
from bot.server.console.sessions import SessionPages
from bot.server.console.signins import SigninPages
from bot.server.signin.gate import Gate
from bot.store.model import ConnectorStore, DeliveryStore, TimelineStore


def setup_console(app: web.Application, *, gate: Gate, store: DeliveryStore, connectors: ConnectorStore,
                  signins: AuthStore, admin: AdminConfigHolder, timeline: TimelineStore,
                  reconciler: Reconciler, session_ttl: int, runtime: Callable[[], Any],
                  memory: ReviewMemory | None = None, github_url: str = "https://github.com",
                  audit: Audit | None = None) -> None:
    """Adds the console's routes; the stores are the app's, opened and closed with it. Links to
    GitHub go to `github_url` (a GitHub Enterprise Server's own web address)."""
    console = Console(gate, store, connectors, signins, admin, timeline, reconciler, session_ttl, runtime, memory,
                      github_url, audit)
    login, deliveries, repos = LoginPages(console), DeliveryPages(console), RepoPages(console)
    connector_pages, signin_pages = ConnectorPages(console), SigninPages(console)
    session_pages, review_pages = SessionPages(console), ReviewPages(console)
    router = app.router
    router.add_get("/console", _to_console)
    router.add_get("/console/login", login.login)
    router.add_post("/console/login/token", login.token)
    router.add_post("/console/logout", login.logout)
    router.add_get("/console/", deliveries.overview)
    router.add_get("/console/deliveries", deliveries.listing)
    router.add_get("/console/deliveries/{delivery_id}", deliveries.delivery)
    router.add_post("/console/deliveries/{delivery_id}/redeliver", deliveries.redeliver)
    router.add_get("/console/repos", review_pages.repositories)
    router.add_get("/console/repos/{owner}/{repo}", repos.repo)
    router.add_get("/console/repos/{owner}/{repo}/pulls/{number}", review_pages.pull)
    router.add_post("/console/repos/{owner}/{repo}/simulate", repos.simulate)
    router.add_get("/console/connectors", connector_pages.listing)
    router.add_post("/console/connectors/apply", connector_pages.apply)
    router.add_get("/console/connectors/{plural}/{name}", connector_pages.one)
    router.add_post("/console/connectors/{plural}/{name}/delete", connector_pages.delete)
    router.add_get("/console/signins", signin_pages.listing)
    router.add_get("/console/sessions", session_pages.listing)
    router.add_post("/console/sessions/end", session_pages.end)
    router.add_get("/console/audit", AuditPages(console).listing)
    router.add_get("/console/static/{name}", _static)
    setup_signin_links(app, console)
    app.middlewares.append(_not_found_in_frame(gate))


def _not_found_in_frame(gate: Gate) -> Any:
    """A GET of an unknown page under /console/ answers 404 in the console's frame (its nav, for
    a signed-in viewer) instead of aiohttp's bare text; everything else passes unchanged."""
    @web.middleware
    async def framed(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                     ) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPNotFound:
            if request.method not in ("GET", "HEAD") or not request.path.startswith("/console/") \
                    or request.path.startswith("/console/static/"):
                raise
        try:
            who: Viewer | None = await viewer(request, gate, None)
        except Refused:
            who = None
        return page("missing.html", 404, who=who, what="page")
    return framed


_TYPES = {".css": "text/css", ".js": "text/javascript", ".png": "image/png", ".svg": "image/svg+xml"}


async def _static(request: web.Request) -> web.StreamResponse:
    """The console's own files (no CDN); only names that exist in the package, nothing else."""
    name = request.match_info["name"]
    files = {p.name: p for p in STATIC.iterdir() if p.is_file()}
    if name not in files:
        raise web.HTTPNotFound()
    path = files[name]
    return web.Response(body=path.read_bytes(), content_type=_TYPES.get(path.suffix, "application/octet-stream"),
                        headers={**headers(), "Cache-Control": "max-age=300"})


async def _to_console(request: web.Request) -> web.Response:
    return web.Response(status=301, headers={"Location": "/console/"})
