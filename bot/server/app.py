"""The aiohttp application: routes, and the start/stop order of stores, queue and admin watcher.

`make_app(settings, handler_for)` is the whole wiring: `handler_for(context)` is called once the
store and the HTTP session exist and returns the job handler (`async def handle(job) -> None`),
so tests inject a small real handler and `main` injects the pipeline.

Routes: the webhook, health (`/healthz`, and the probes `/livez`, `/readyz`: bot.server.probes) and metrics; sign-in through the connectors (`bot.server.signin`); the
connector resource API, the admin API, the SARIF uploads (bot.server.analyses) and the audit log
(`GET /v1/audit`, bot.server.audit_api), all behind the sign-in gate (a session with the
permission, or the break-glass `REVIEWER_ADMIN_TOKEN`); the admin console (`/console/`,
bot.server.console) and the home page (`/`, bot.server.home) wherever sign-in is served (roles
"all" and "web"). Wherever jobs run (roles
"all" and "worker"), the delivery timeline is recorded around the job handler and on the outgoing
HTTP session. The storage (bot.store: SQLite or PostgreSQL, from `REVIEWER_DATABASE_URL`) holds
the delivery, timeline and connector stores; it opens (and migrates) when the app starts and closes
when it stops. One `GitHubApp` (the app's identity and its installation-token cache) serves the
jobs and the admin API alike.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal

import aiohttp
from aiohttp import web

from bot.audit.log import Audit
from bot.auth.access import access_of
from bot.connectors.controller import Reconciler
from bot.connectors.descriptor_fetch import DescriptorSource
from bot.connectors.field_checks import ConnectorSecrets
from bot.events.jobs import Handler
from bot.github import GitHubApp
from bot.github.coordination import Coordination
from bot.learnings.book import LearningBook
from bot.secrets.references import SecretStore
from bot.server import logging as log
from bot.server.access_log import enable_access_log
from bot.server.admin_api import setup_admin_routes
from bot.server.admin_reload import AdminConfigHolder
from bot.server.analyses import setup_analyses_routes, web_url_of
from bot.server.audit_api import AUDIT, setup_audit_routes
from bot.server.console import setup_console
from bot.server.console.learnings import setup_learnings_console
from bot.server.console.timeline import TimelineRecorder
from bot.server.home import setup_home
from bot.server.learnings_api import setup_learnings_routes
from bot.server.metrics import Metrics
from bot.server.pg_queue import ProcrastinateQueue
from bot.server.probes import Readiness, setup_probes
from bot.server.queue import JobQueue
from bot.server.resources.api import setup_routes as setup_connector_routes
from bot.server.retention import keep_pruning
from bot.server.server_context import HandlerFactory, ServerContext
from bot.server.settings import Settings
from bot.server.signin.gate import Gate
from bot.server.signin.routes import SIGNIN_STORE, setup_signin
from bot.server.webhook import MAX_BODY, make_handler
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
RECONCILER = web.AppKey("reconciler", Reconciler)  # connector statuses, kept true to the world (web roles)
LEARNINGS = web.AppKey("learnings", LearningBook)  # learnings and posted findings' outcomes (bot.store.learnings)


Role = Literal["all", "web", "worker"]  # serve, serve --no-workers, worker
ROLE = web.AppKey("role", str)


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


def make_app(settings: Settings, handler_for: HandlerFactory, *, admin: AdminConfigHolder | None = None,
             metrics: Metrics | None = None, role: Role = "all") -> web.Application:
    """The server's app; `admin` is loaded from the settings when not given (raises
    AdminConfigError for a bad file: the server never starts half-configured).

    `role`: "all" takes deliveries and runs jobs; "web" takes deliveries and serves the APIs;
    "worker" runs jobs and serves only /healthz and /metrics. "web" and "worker" need PostgreSQL
    (ValueError otherwise): their processes share the store and the queue."""
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
    app[SETTINGS], app[METRICS], app[ADMIN], app[RUNTIME] = settings, metrics, admin, Runtime(handler_for)
    app[ROLE] = role
    stores = app[STORES] = stores_for(settings.database_url)
    storage = app[STORAGE] = stores.storage
    store = app[STORE] = storage.deliveries
    app[LEARNINGS] = LearningBook(stores.learnings)
    token = settings.admin_token.reveal() if settings.admin_token else None
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_page)
    setup_probes(app, Readiness(started=lambda: app[RUNTIME].queue is not None, ping=store.ping,
                                schema_version=storage.schema_version, latest=latest_schema_version(settings.database_url)))
    app.cleanup_ctx.append(_lifecycle)
    if role != "web":
        _record_timeline(app, settings)
    if role == "worker":
        return app
    audit = app[AUDIT] = Audit(storage.audit)
    admin.audit = audit  # web processes record the admin file's reloads (workers reload it too, unrecorded)
    app.router.add_post("/webhook", make_handler(settings.webhook_secret.reveal().encode(), store, metrics))
    descriptors = DescriptorSource()  # SAML metadata: fetched by a connector's reconcile, kept for sign-in
    app.on_cleanup.append(lambda _: descriptors.close())
    secrets = ConnectorSecrets(SecretStore(settings.secrets_dir), lambda: _admin_secrets(admin))
    reconciler = app[RECONCILER] = Reconciler(storage.connectors, secrets, descriptors, settings.public_url)
    gate = setup_signin(app, connectors=storage.connectors, store=stores.signin,
                        secrets=secrets, public_url=settings.public_url,
                        session_ttl=settings.session_ttl, admin_token=token, access=lambda: access_of(admin.current),
                        directory_url=settings.directory_url, descriptors=descriptors)
    setup_connector_routes(app, storage.connectors, admin_token=token, gate=gate, reconciler=reconciler, audit=audit)
    setup_admin_routes(app, gate=gate, context=lambda: app[RUNTIME].context, audit=audit)
    setup_audit_routes(app, gate=gate, audit=audit)
    setup_learnings_routes(app, gate=gate, store=app[LEARNINGS], audit=audit)
    setup_analyses_routes(app, gate=gate, uploads=stores.uploads,
                          context=lambda: app[RUNTIME].context, public_url=settings.public_url,
                          github_web_url=web_url_of(settings.api_url))
    _with_console(app, settings, gate)
    setup_home(app, settings)
    return app


def _admin_secrets(admin: AdminConfigHolder) -> frozenset[str]:
    """The secrets the admin file in force references: no connector may read them."""
    names = getattr(admin.current, "secret_names", None)
    return names if isinstance(names, frozenset) else frozenset()


def _record_timeline(app: web.Application, settings: Settings) -> None:
    """The delivery timeline, recorded where jobs run (roles "all" and "worker"): a recorder around
    the job handler and a trace on the outgoing HTTP session, writing to the storage's timeline."""
    runtime = app[RUNTIME]
    recorder = TimelineRecorder(app[STORAGE].timeline, settings.api_url)
    handler_for = runtime.handler_for
    runtime.handler_for = lambda context: recorder.wrap(handler_for(context))
    runtime.trace_configs.append(recorder.trace_config())


def _with_console(app: web.Application, settings: Settings, gate: Gate) -> None:
    """The console's pages, where the sign-in is served (roles "all" and "web")."""
    runtime = app[RUNTIME]
    storage = app[STORAGE]
    setup_console(app, gate=gate, store=storage.deliveries, connectors=storage.connectors,
                  signins=app[SIGNIN_STORE], admin=app[ADMIN], timeline=storage.timeline,
                  reconciler=app[RECONCILER], session_ttl=settings.session_ttl, runtime=lambda: runtime,
                  memory=app[STORES].memory, github_url=settings.github_url, audit=app[AUDIT])
    setup_learnings_console(app, gate=gate, store=app[LEARNINGS], audit=app[AUDIT])


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
        if app[ROLE] != "worker":
            pruner = asyncio.create_task(keep_pruning(store, settings.retention_days, app[METRICS],
                                                      audit=app[STORAGE].audit), name="retention")
            stack.callback(pruner.cancel)
            reconciling = asyncio.create_task(app[RECONCILER].watch(settings.admin_reload_seconds,
                                                                    settings.reconcile_seconds), name="reconcile")
            stack.callback(reconciling.cancel)
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
                              dispatch=role != "worker", work=role != "web")
