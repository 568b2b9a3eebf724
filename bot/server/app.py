"""The aiohttp application of the web roles: the core every process has (bot/server/core.py: the
store, the queue, the timeline, probes, metrics) and the routes a web process serves.

`make_app(settings, handler_for)` is the whole wiring: `handler_for(context)` is called once the
store and the HTTP session exist and returns the job handler (`async def handle(job) -> None`),
so tests inject a small real handler and `main` injects the pipeline.

Routes: the webhook, health (`/healthz`, and the probes `/livez`, `/readyz`: bot.server.probes) and metrics; sign-in through the connectors (`bot.server.signin`); the
connector resource API, the admin API, the SARIF uploads (bot.server.api.uploads) and the audit log
(`GET /v1/audit`, bot.server.api.audit), all behind the sign-in gate (a session with the
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

from aiohttp import web

from bot.audit.log import Audit
from bot.auth.access import access_of
from bot.connectors.controller import Reconciler
from bot.connectors.descriptor_fetch import DescriptorSource
from bot.connectors.field_checks import ConnectorSecrets
from bot.secrets.references import SecretStore
from bot.server.admin_reload import AdminConfigHolder
from bot.server.api.admin import setup_admin_routes
from bot.server.api.audit import AUDIT, setup_audit_routes
from bot.server.api.learnings import setup_learnings_routes
from bot.server.api.uploads import UploadAdmission, setup_upload_routes, web_url_of
from bot.server.console import setup_console
from bot.server.console.learnings import setup_learnings_console
from bot.server.context import HandlerFactory
from bot.server.core import (
    ADMIN,
    LEARNINGS,
    METRICS,
    ROLE,
    RUNTIME,
    SETTINGS,
    STORAGE,
    STORE,
    STORES,
    Role,
    core_app,
)
from bot.server.home import setup_home
from bot.server.jobs.retention import keep_pruning
from bot.server.metrics import Metrics
from bot.server.resources.api import setup_routes as setup_connector_routes
from bot.server.settings import Settings
from bot.server.signin.gate import Gate
from bot.server.signin.routes import SIGNIN_STORE, setup_signin
from bot.server.webhook import make_handler

# What tests and tools read off an app, whichever module made it.
__all__ = ["ADMIN", "LEARNINGS", "METRICS", "RECONCILER", "ROLE", "RUNTIME", "SETTINGS", "STORAGE", "STORE",
           "STORES", "Role", "make_app"]

RECONCILER = web.AppKey("reconciler", Reconciler)  # connector statuses, kept true to the world (web roles)


def make_app(settings: Settings, handler_for: HandlerFactory, *, admin: AdminConfigHolder | None = None,
             metrics: Metrics | None = None, role: Role = "all") -> web.Application:
    """The server's app: the core (bot/server/core.py `core_app`, which says what each role does
    and raises for a bad admin file or a role SQLite cannot serve), and for the roles that take
    deliveries ("all", "web") the webhook, sign-in, the APIs and the console."""
    app = core_app(settings, handler_for, admin=admin, metrics=metrics, role=role)
    if role != "worker":
        _with_web(app)
    return app


def _with_web(app: web.Application) -> None:
    """The routes of a process that takes deliveries, and the background work that goes with
    them (the retention pruner, the connectors' reconcile)."""
    settings, admin, metrics, stores = app[SETTINGS], app[ADMIN], app[METRICS], app[STORES]
    storage, store = app[STORAGE], app[STORE]
    token = settings.admin_token.reveal() if settings.admin_token else None
    audit = app[AUDIT] = Audit(storage.audit)
    admin.audit = audit  # web processes record the admin file's reloads (workers reload it too, unrecorded)
    app.router.add_post("/webhook", make_handler(settings.webhook_secret.reveal().encode(), store, metrics,
                                                 settings.webhook_unverified_mib * 1024 * 1024))
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
    setup_upload_routes(app, gate=gate, uploads=stores.uploads,
                          context=lambda: app[RUNTIME].context, public_url=settings.public_url,
                          github_web_url=web_url_of(settings.api_url), audit=audit,
                          admission=UploadAdmission(settings.upload_decodes, settings.upload_memory_mib * 1024 * 1024))
    _with_console(app, settings, gate)
    setup_home(app, settings)
    app.cleanup_ctx.append(_web_tasks)


async def _web_tasks(app: web.Application) -> AsyncIterator[None]:
    """The retention pruner and the connectors' reconcile, once the core has opened the store."""
    settings = app[SETTINGS]
    async with contextlib.AsyncExitStack() as stack:
        pruner = asyncio.create_task(keep_pruning(app[STORE], settings.retention_days, app[METRICS],
                                                  audit=app[STORAGE].audit), name="retention")
        stack.callback(pruner.cancel)
        reconciling = asyncio.create_task(app[RECONCILER].watch(settings.admin_reload_seconds,
                                                                settings.reconcile_seconds), name="reconcile")
        stack.callback(reconciling.cancel)
        yield


def _admin_secrets(admin: AdminConfigHolder) -> frozenset[str]:
    """The secrets the admin file in force references: no connector may read them."""
    names = getattr(admin.current, "secret_names", None)
    return names if isinstance(names, frozenset) else frozenset()


def _with_console(app: web.Application, settings: Settings, gate: Gate) -> None:
    """The console's pages, where the sign-in is served (roles "all" and "web")."""
    runtime = app[RUNTIME]
    storage = app[STORAGE]
    setup_console(app, gate=gate, store=storage.deliveries, connectors=storage.connectors,
                  signins=app[SIGNIN_STORE], admin=app[ADMIN], timeline=storage.timeline,
                  reconciler=app[RECONCILER], session_ttl=settings.session_ttl, runtime=lambda: runtime,
                  memory=app[STORES].memory, github_url=settings.github_url, audit=app[AUDIT])
    setup_learnings_console(app, gate=gate, store=app[LEARNINGS], audit=app[AUDIT])
