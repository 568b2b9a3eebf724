"""What every process of the server is, whatever its role: the store, the queue and its jobs, the
delivery timeline where jobs run, the admin file's watcher, health, probes and metrics.

`core_app(...)` is the whole of a worker (`reviewer worker`); bot/server/app.py adds the web
roles' routes (the webhook, sign-in, the APIs, the console) on top of it. A worker process imports
this module and never the console's, sign-in's or the resource API's (tests/layers/test_worker_imports.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from bot.events.jobs import Handler
from bot.github import GitHubApp
from bot.github.coordination import Coordination
from bot.learnings.book import LearningBook
from bot.server import logging as log
from bot.server.access_log import enable_access_log
from bot.server.admin_reload import AdminConfigHolder
from bot.server.context import HandlerFactory, Role, ServerContext
from bot.server.forwarded import trusted_proxies_middleware
from bot.server.jobs.pg_queue import ProcrastinateQueue
from bot.server.jobs.queue import JobQueue
from bot.server.jobs.timeline import TimelineRecorder
from bot.server.metrics import Metrics
from bot.server.probes import Readiness, setup_probes
from bot.server.settings import Settings
from bot.server.webhook import MAX_BODY
from bot.store import is_postgres, latest_schema_version, redact_url
from bot.store.model import DeliveryStore, Storage
from bot.store.stores import Stores, stores_for

logger = log.get("app")

SETTINGS = web.AppKey("settings", Settings)
METRICS = web.AppKey("metrics", Metrics)
ADMIN = web.AppKey("admin", AdminConfigHolder)
STORES = web.AppKey("stores", Stores)  # every store of the process, on one pool (bot/store/stores.py)
STORAGE = web.AppKey("storage", Storage)
STORE = web.AppKey("store", DeliveryStore)
LEARNINGS = web.AppKey("learnings", LearningBook)  # learnings and posted findings' outcomes (bot.store.learnings)
ROLE = web.AppKey("role", str)  # bot.server.context.Role


@dataclass
class Runtime:
    """What exists only while the app runs (the app's own state is frozen once it starts)."""

    handler_for: HandlerFactory
    context: ServerContext | None = None
    queue: JobQueue | ProcrastinateQueue | None = None
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
    if queue is not None:  # None only before the app has started
        metrics.queue_depth.set(queue.store.unclassified, state="received")
        metrics.queue_depth.set(queue.depth(), state="queued")
        metrics.running.set(queue.running)
    try:  # what became of posted findings (bot.store.learnings); the page is served without them
        metrics.findings_by_state(await asyncio.wait_for(request.app[LEARNINGS].count_states(), timeout=5))
    except Exception as exc:
        logger.warning("the findings' outcomes were not counted for /metrics", extra={"error": log.error_text(exc)})
    return web.Response(text=metrics.render(), content_type="text/plain", charset="utf-8",
                        headers={"X-Content-Type-Options": "nosniff"})


def core_app(settings: Settings, handler_for: HandlerFactory, *, admin: AdminConfigHolder | None = None,
             metrics: Metrics | None = None, role: Role = "all") -> web.Application:
    """The app every role has; `admin` is loaded from the settings when not given (raises
    AdminConfigError for a bad file: the server never starts half-configured).

    `role`: "all" takes deliveries and runs jobs; "web" takes deliveries and serves the APIs;
    "worker" runs jobs and serves only /healthz, the probes and /metrics. "web" and "worker" need
    PostgreSQL (ValueError otherwise): their processes share the store and the queue."""
    if role != "all" and not is_postgres(settings.database_url):
        raise ValueError(f"{'reviewer serve --no-workers' if role == 'web' else 'reviewer worker'} needs a store "
                         "shared by every process: set REVIEWER_DATABASE_URL=postgresql://user:password@host/db")
    log.register_secret(*settings.secrets())
    metrics = metrics or Metrics()
    admin = admin or AdminConfigHolder.loaded(settings.admin_config, metrics)  # AdminConfigError if bad
    admin.metrics = admin.metrics or metrics
    app = web.Application(client_max_size=MAX_BODY)
    if settings.access_log:
        enable_access_log(app)  # first: the outermost middleware
    if settings.trusted_proxies:  # outside even the access log, which logs the client's address
        app.middlewares.insert(0, trusted_proxies_middleware(settings.trusted_proxies))
    app[SETTINGS], app[METRICS], app[ADMIN], app[RUNTIME] = settings, metrics, admin, Runtime(handler_for)
    app[ROLE] = role
    stores = app[STORES] = stores_for(settings.database_url)
    storage = app[STORAGE] = stores.storage
    store = app[STORE] = storage.deliveries
    app[LEARNINGS] = LearningBook(stores.learnings)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_page)
    setup_probes(app, Readiness(started=lambda: app[RUNTIME].queue is not None, ping=store.ping,
                                schema_version=storage.schema_version, latest=latest_schema_version(settings.database_url)))
    app.cleanup_ctx.append(_lifecycle)
    if role != "web":
        _record_timeline(app, settings)
    return app


def _record_timeline(app: web.Application, settings: Settings) -> None:
    """The delivery timeline, recorded where jobs run (roles "all" and "worker"): a recorder around
    the job handler and a trace on the outgoing HTTP session, writing to the storage's timeline."""
    runtime = app[RUNTIME]
    recorder = TimelineRecorder(app[STORAGE].timeline, settings.api_url)
    handler_for = runtime.handler_for
    runtime.handler_for = lambda context: recorder.wrap(handler_for(context))
    runtime.trace_configs.append(recorder.trace_config())


def github_app(settings: Settings, http: aiohttp.ClientSession, metrics: Metrics,
               coordination: Coordination | None = None) -> GitHubApp | None:
    """The app's GitHub client, or None when the settings lack the app id or the private key."""
    if settings.app_id is None or settings.private_key is None:
        return None
    return GitHubApp(http, app_id=settings.app_id, private_key=settings.private_key.reveal(), coordination=coordination,
                     base_url=settings.api_url, on_call=lambda method, route, status: metrics.github_call(status))


async def _lifecycle(app: web.Application) -> AsyncIterator[None]:
    settings, store, admin, runtime = app[SETTINGS], app[STORE], app[ADMIN], app[RUNTIME]
    async with contextlib.AsyncExitStack() as stack:
        await app[STORAGE].open()
        stack.push_async_callback(app[STORAGE].close)
        http = await stack.enter_async_context(aiohttp.ClientSession(trace_configs=runtime.trace_configs or None))
        runtime.context = ServerContext(settings, admin, app[METRICS], store, http, app[STORES],
                                        github_app(settings, http, app[METRICS], app[STORAGE].coordination))
        runtime.queue = _queue(app, runtime.handler_for(runtime.context))
        store.on_received = runtime.queue.wake
        await runtime.queue.start()
        stack.push_async_callback(runtime.queue.stop)
        if settings.admin_config:
            watcher = asyncio.create_task(admin.watch(settings.admin_reload_seconds), name="admin-reload")
            stack.callback(watcher.cancel)
        logger.info("server started", extra={"role": app[ROLE], "workers": settings.workers,
                                             "database": redact_url(settings.database_url)})
        yield
    logger.info("server stopped")


def _queue(app: web.Application, handler: Handler) -> JobQueue | ProcrastinateQueue:
    """The in-process queue on SQLite; procrastinate on PostgreSQL, in the app's role."""
    settings, store, role = app[SETTINGS], app[STORE], app[ROLE]
    if not is_postgres(settings.database_url):
        return JobQueue(store, handler, app[METRICS], settings.workers)
    return ProcrastinateQueue(settings.database_url, store, handler, app[METRICS], settings.workers,
                              dispatch=role != "worker", work=role != "web", timings=settings.queue)
