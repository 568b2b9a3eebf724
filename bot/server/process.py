"""Running one server process, whatever its role, once bot/server/launch.py has read and checked
its settings: load the admin configuration, wire the pipeline, build the role's app, serve until a
signal. `reviewer serve` builds the web app (bot/server/app.py), `reviewer worker`
(bot/server/core.py) only the core, so that a worker never imports the console, sign-in or the
resource API.

Exit codes: 0 after a clean stop (SIGTERM/SIGINT), 2 when the settings are unusable (the webhook
secret, the GitHub App's id or private key missing, a key that is not RSA, a bad value), 1 when
the admin configuration is invalid or the port cannot be listened on — the server never starts
half-configured, and every refusal is a line on stderr, never a traceback.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
from collections.abc import Callable

from aiohttp import web

from bot.events.jobs import Handler
from bot.pipeline import make_handler
from bot.server import logging as log
from bot.server.admin_reload import AdminConfigError, AdminConfigHolder
from bot.server.context import AppFactory, HandlerFactory, Role, ServerContext
from bot.server.listen import ListenError, bind, start_site
from bot.server.metrics import Metrics
from bot.server.settings import Settings
from bot.store import redact_url
from bot.store.model import MigrationFailed, SchemaTooNew, StoreRefused, StoreUnavailable
from bot.telemetry.setup import configure as configure_traces

logger = log.get("main")
STOP_WITHIN = 55.0  # seconds from SIGTERM to exit at most (jobs get at most 45 of them: queue_timings.MOST_GRACE)


def pipeline_handler(context: ServerContext) -> Handler:
    """The one place the queue's seam meets the pipeline."""
    return make_handler(context.github, context.admin, context.http, context.settings.secrets_dir,
                        stores=context.stores, public_url=context.settings.public_url)


async def serve(settings: Settings, admin: AdminConfigHolder, metrics: Metrics, build: AppFactory,
                handler_for: HandlerFactory = pipeline_handler, role: Role = "all") -> None:
    """Serve `build`'s app until SIGTERM or SIGINT, then stop cleanly: no new job; running ones
    finish (on PostgreSQL, for up to a grace period, then are handed back) or, on SQLite, are
    requeued at the next start. `run` calls it with the role's app; tests and bench/webhooks.py
    call it with the web app (bot/server/app.py `make_app`) and a job handler of their own."""
    sockets = bind(settings.host, settings.port)  # ListenError before the app starts (the store, "server started")
    try:
        app = build(settings, handler_for, admin=admin, metrics=metrics, role=role)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    stop = asyncio.Event()
    try:
        await start_site(runner, sockets)
        _freeze_startup_objects()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):  # before "listening": a supervisor may stop us right after it
            loop.add_signal_handler(sig, stop.set)
        logger.info("listening", extra={"host": settings.host, "port": runner.addresses[0][1]})  # the real port
        await stop.wait()
        logger.info("stopping")
    finally:
        try:  # docs/operations.md: a stop ends within a minute, even with the store unreachable
            await asyncio.wait_for(runner.cleanup(), STOP_WITHIN)
        except TimeoutError:
            logger.warning("stopping took too long; exiting with work still open (it is taken up again)")


def _freeze_startup_objects() -> None:
    """Keep what start-up made (modules, the app, the admin configuration) out of every later
    collection: they live as long as the process, and a full collection that walks them all
    stalled every request in flight for about 25 ms under webhook load (0.4 ms once frozen)."""
    gc.collect()
    gc.freeze()


def run(settings: Settings, role: Role, build: AppFactory, error: Callable[[str], None]) -> int:
    """The process once its settings are checked (bot/server/launch.py), to its exit code (the
    module's docstring); `error` writes a refusal's line."""
    metrics = Metrics()
    try:
        admin = AdminConfigHolder.loaded(settings.admin_config, metrics)
    except AdminConfigError as exc:
        error(f"the admin configuration {settings.admin_config} is invalid; not starting")
        for line in exc.lines:
            print(line, file=sys.stderr)
        return 1
    if settings.admin_token is None:
        logger.warning("REVIEWER_ADMIN_TOKEN is not set: only signed-in sessions reach the resource and admin APIs "
                       "(there is no break-glass token)")
    traces = configure_traces(service="reviewer-worker" if role == "worker" else "reviewer")
    if traces is not None:
        logger.info("traces are exported over OTLP/HTTP (the OTEL_* variables)")
    try:
        asyncio.run(serve(settings, admin, metrics, build, role=role))
    except ListenError as exc:
        error(str(exc))
        return 1
    except (StoreUnavailable, StoreRefused, SchemaTooNew, MigrationFailed) as exc:
        where = redact_url(settings.database_url)
        logger.error(f"the store cannot be used; not starting: {exc}", extra={
            "database": where, "reason": getattr(exc, "reason", "schema")})
        error(f"the store {where}: {exc}")
        return 1
    finally:
        if traces is not None:
            traces.shutdown()  # what the batch still holds is sent before the process ends
    return 0
