"""The aiohttp application: routes, and the start/stop order of stores, queue and admin watcher.

`make_app(settings, handler_for)` is the whole wiring: `handler_for(context)` is called once the
store and the HTTP session exist and returns the job handler (`async def handle(job) -> None`),
so tests inject a small real handler and `main` injects the pipeline.

Routes: the webhook, health and metrics; sign-in through the connectors (`bot.auth.http`); the
connector resource API and the admin API, both behind the sign-in gate (a session with the
permission, or the break-glass `REVIEWER_ADMIN_TOKEN`). The connector store shares the SQLite file of the delivery store
and, like it, opens when the app starts and closes when it stops. One `GitHubApp` (the app's
identity and its installation-token cache) serves the jobs and the admin API alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from bot.auth.access import access_of
from bot.auth.guard import Gate
from bot.auth.http import SIGNIN_STORE, setup_signin
from bot.connectors.api import setup_routes as setup_connector_routes
from bot.connectors.store import ConnectorStore
from bot.github import GitHubApp
from bot.server import logging as log
from bot.server.admin_api import setup_admin_routes
from bot.server.admin_reload import AdminConfigHolder
from bot.server.console import setup_console
from bot.server.jobs import Handler
from bot.server.metrics import Metrics
from bot.server.queue import JobQueue
from bot.server.retention import keep_pruning
from bot.server.settings import Settings
from bot.server.store import Store
from bot.server.webhook import MAX_BODY, make_handler

logger = log.get("app")

SETTINGS = web.AppKey("settings", Settings)
METRICS = web.AppKey("metrics", Metrics)
ADMIN = web.AppKey("admin", AdminConfigHolder)
STORE = web.AppKey("store", Store)
CONNECTORS = web.AppKey("connectors", ConnectorStore)


@dataclass
class ServerContext:
    """What a job handler may use: settings (secrets inside `Secret`), the admin configuration
    holder (read `.current` per job), metrics (`metrics.github_call(status)`), the store, one
    shared HTTP session for outgoing calls and the GitHub App client (None without an app id and
    private key: nothing can be done on GitHub then)."""

    settings: Settings
    admin: AdminConfigHolder
    metrics: Metrics
    store: Store
    http: aiohttp.ClientSession
    github: GitHubApp | None = None


HandlerFactory = Callable[[ServerContext], Handler]


@dataclass
class Runtime:
    """What exists only while the app runs (the app's own state is frozen once it starts)."""

    handler_for: HandlerFactory
    context: ServerContext | None = None
    queue: JobQueue | None = None
    trace_configs: list[aiohttp.TraceConfig] = field(default_factory=list)  # on the outgoing HTTP session


RUNTIME = web.AppKey("runtime", Runtime)


async def healthz(request: web.Request) -> web.Response:
    try:
        await asyncio.wait_for(request.app[STORE].ping(), timeout=5)
    except Exception as exc:
        logger.error("health check failed: the store is unreachable", extra={"error": log.error_text(exc)})
        return web.json_response({"status": "unavailable", "store": "unreachable"}, status=503)
    return web.json_response({"status": "ok", "store": "ok"})


async def metrics_page(request: web.Request) -> web.Response:
    metrics = request.app[METRICS]
    queue = request.app[RUNTIME].queue
    metrics.queue_depth.set(queue.store.unclassified, state="received")
    metrics.queue_depth.set(queue.depth(), state="queued")
    metrics.running.set(queue.running)
    return web.Response(text=metrics.render(), content_type="text/plain", charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})


def make_app(settings: Settings, handler_for: HandlerFactory, *, admin: AdminConfigHolder | None = None,
             metrics: Metrics | None = None) -> web.Application:
    """The server's app; `admin` is loaded from the settings when not given (raises
    AdminConfigError for a bad file: the server never starts half-configured)."""
    log.register_secret(*settings.secrets())
    metrics = metrics or Metrics()
    admin = admin or AdminConfigHolder.loaded(settings.admin_config, metrics)  # AdminConfigError if bad
    admin.metrics = admin.metrics or metrics
    app = web.Application(client_max_size=MAX_BODY)
    app[SETTINGS], app[METRICS], app[ADMIN], app[RUNTIME] = settings, metrics, admin, Runtime(handler_for)
    store = app[STORE] = Store(settings.database_path)
    connectors = app[CONNECTORS] = ConnectorStore(settings.database_path)
    token = settings.admin_token.reveal() if settings.admin_token else None
    app.router.add_post("/webhook", make_handler(settings.webhook_secret.reveal().encode(), store, metrics))
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_page)
    gate = setup_signin(app, connectors=connectors, database_path=settings.database_path,
                        secrets_dir=settings.secrets_dir, public_url=settings.public_url,
                        session_ttl=settings.session_ttl, admin_token=token, access=lambda: access_of(admin.current))
    setup_connector_routes(app, connectors, admin_token=token, secrets_dir=settings.secrets_dir, gate=gate)
    setup_admin_routes(app, gate=gate, context=lambda: app[RUNTIME].context)
    _with_console(app, settings, gate)
    app.cleanup_ctx.append(_lifecycle)
    return app


def _with_console(app: web.Application, settings: Settings, gate: Gate) -> None:
    """The console's pages, and its timeline recorder around the job handler and on the HTTP session."""
    runtime = app[RUNTIME]
    recorder = setup_console(app, gate=gate, store=app[STORE], connectors=app[CONNECTORS], signins=app[SIGNIN_STORE],
                             admin=app[ADMIN], database_path=settings.database_path, github_api_url=settings.api_url,
                             secrets_dir=settings.secrets_dir, session_ttl=settings.session_ttl, runtime=lambda: runtime)
    handler_for = runtime.handler_for
    runtime.handler_for = lambda context: recorder.wrap(handler_for(context))
    runtime.trace_configs.append(recorder.trace_config())


def github_app(settings: Settings, http: aiohttp.ClientSession, metrics: Metrics) -> GitHubApp | None:
    """The app's GitHub client, or None when the settings lack the app id or the private key."""
    if settings.app_id is None or settings.private_key is None:
        return None
    return GitHubApp(http, app_id=settings.app_id, private_key=settings.private_key.reveal(),
                     base_url=settings.api_url, on_call=lambda method, route, status: metrics.github_call(status))


async def _lifecycle(app: web.Application) -> AsyncIterator[None]:
    settings, store, admin, runtime = app[SETTINGS], app[STORE], app[ADMIN], app[RUNTIME]
    async with contextlib.AsyncExitStack() as stack:
        await store.open()
        stack.push_async_callback(store.close)
        await asyncio.to_thread(app[CONNECTORS].open)
        stack.push_async_callback(asyncio.to_thread, app[CONNECTORS].close)
        http = await stack.enter_async_context(aiohttp.ClientSession(trace_configs=runtime.trace_configs or None))
        runtime.context = ServerContext(settings, admin, app[METRICS], store, http,
                                        github_app(settings, http, app[METRICS]))
        runtime.queue = JobQueue(store, runtime.handler_for(runtime.context), app[METRICS], settings.workers)
        store.on_received = runtime.queue.wake
        await runtime.queue.start()
        stack.push_async_callback(runtime.queue.stop)
        if settings.admin_config:
            watcher = asyncio.create_task(admin.watch(settings.admin_reload_seconds), name="admin-reload")
            stack.callback(watcher.cancel)
        pruner = asyncio.create_task(keep_pruning(store, settings.retention_days, app[METRICS]), name="retention")
        stack.callback(pruner.cancel)
        logger.info("server started", extra={"workers": settings.workers, "database": settings.database_path})
        yield
    logger.info("server stopped")
