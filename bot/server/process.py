"""Running one server process, whatever its role: read settings, load the admin configuration, wire
the pipeline, build the role's app, serve until a signal. `reviewer serve` (bot/server/main.py)
builds the web app, `reviewer worker` (bot/server/worker.py) only the core, so that a worker never
imports the console, sign-in or the resource API.

Exit codes: 0 after a clean stop (SIGTERM/SIGINT), 2 when the settings are unusable (the webhook
secret, the GitHub App's id or private key missing, a key that is not RSA, a bad value), 1 when
the admin configuration is invalid or the port cannot be listened on — the server never starts
half-configured, and every refusal is a line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys

from aiohttp import web

from bot.events.jobs import Handler
from bot.pipeline import make_handler
from bot.server import logging as log
from bot.server.admin_reload import AdminConfigError, AdminConfigHolder
from bot.server.listen import ListenError, bind, start_site
from bot.server.metrics import Metrics
from bot.server.server_context import AppFactory, HandlerFactory, Role, ServerContext
from bot.server.settings import Settings, SettingsError, load_settings
from bot.store import is_postgres, redact_url
from bot.store.model import MigrationFailed, SchemaTooNew, StoreRefused, StoreUnavailable
from bot.telemetry.setup import configure as configure_traces

logger = log.get("main")
STOP_WITHIN = 55.0  # seconds from SIGTERM to exit at most (jobs get 45 of them: pg_queue.GRACE)


def pipeline_handler(context: ServerContext) -> Handler:
    """The one place the queue's seam meets the pipeline."""
    return make_handler(context.github, context.admin, context.http, context.settings.secrets_dir,
                        stores=context.stores, public_url=context.settings.public_url)


def _error(message: str, command: str = "reviewer serve") -> None:
    print(f"{command}: error: {message}", file=sys.stderr)


async def serve(settings: Settings, admin: AdminConfigHolder, metrics: Metrics, build: AppFactory,
                handler_for: HandlerFactory = pipeline_handler, role: Role = "all") -> None:
    """Serve until SIGTERM or SIGINT, then stop cleanly: no new job; running ones finish (on
    PostgreSQL, for up to a grace period, then are handed back) or, on SQLite, are requeued at the
    next start."""
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


def run(args: argparse.Namespace, role: Role, build: AppFactory) -> int:
    """The process, from its command line to its exit code (the module's docstring)."""
    log.configure()
    command = "reviewer worker" if role == "worker" else "reviewer serve"
    try:
        settings = load_settings(config_file=getattr(args, "config", None), port=getattr(args, "port", None),
                                 host=getattr(args, "host", None), require_app=True)
    except SettingsError as exc:
        for problem in exc.problems:
            _error(problem, command)
        return 2
    log.configure(level=logging.getLevelName(settings.log_level))  # REVIEWER_LOG_LEVEL, from here on
    log.register_secret(*settings.secrets())
    metrics = Metrics()
    try:
        admin = AdminConfigHolder.loaded(settings.admin_config, metrics)
    except AdminConfigError as exc:
        _error(f"the admin configuration {settings.admin_config} is invalid; not starting", command)
        for line in exc.lines:
            print(line, file=sys.stderr)
        return 1
    if settings.admin_token is None:
        logger.warning("REVIEWER_ADMIN_TOKEN is not set: only signed-in sessions reach the resource and admin APIs "
                       "(there is no break-glass token)")
    if role != "all" and not is_postgres(settings.database_url):
        _error(f"{'--no-workers' if role == 'web' else 'reviewer worker'} needs a store shared by every process: "
               "set REVIEWER_DATABASE_URL=postgresql://user:password@host:5432/database", command)
        return 2
    traces = configure_traces(service="reviewer-worker" if role == "worker" else "reviewer")
    if traces is not None:
        logger.info("traces are exported over OTLP/HTTP (the OTEL_* variables)")
    try:
        asyncio.run(serve(settings, admin, metrics, build, role=role))
    except ListenError as exc:
        _error(str(exc), command)
        return 1
    except (StoreUnavailable, StoreRefused, SchemaTooNew, MigrationFailed) as exc:
        where = redact_url(settings.database_url)
        logger.error(f"the store cannot be used; not starting: {exc}", extra={
            "database": where, "reason": getattr(exc, "reason", "schema")})
        _error(f"the store {where}: {exc}", command)
        return 1
    finally:
        if traces is not None:
            traces.shutdown()  # what the batch still holds is sent before the process ends
    return 0
