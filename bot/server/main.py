"""`reviewer serve` (`--no-workers`: web only): the web app (bot/server/app.py) run as a process
(bot/server/process.py). `reviewer worker` is bot/server/worker.py.

Exit codes: 0 after a clean stop (SIGTERM/SIGINT), 2 when the settings are unusable (the webhook
secret, the GitHub App's id or private key missing, a key that is not RSA, a bad value), 1 when
the admin configuration is invalid or the port cannot be listened on — the server never starts
half-configured, and every refusal is a line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse

from bot.server import process
from bot.server.admin_reload import AdminConfigHolder
from bot.server.app import make_app
from bot.server.metrics import Metrics
from bot.server.process import pipeline_handler
from bot.server.server_context import HandlerFactory, Role
from bot.server.settings import Settings


def run(args: argparse.Namespace) -> int:
    return process.run(args, "web" if getattr(args, "no_workers", False) else "all", make_app)


async def serve(settings: Settings, admin: AdminConfigHolder, metrics: Metrics,
                handler_for: HandlerFactory = pipeline_handler, role: Role = "all") -> None:
    """Serve the web app until SIGTERM or SIGINT (bot/server/process.py `serve`)."""
    await process.serve(settings, admin, metrics, make_app, handler_for, role)
