"""The web app (bot/server/app.py) served in this process until a signal: what `reviewer serve`
runs once bot/server/launch.py has checked its settings, and what tests run with a handler of
their own. `reviewer worker` runs bot/server/core.py's `core_app` instead.
"""

from __future__ import annotations

from bot.server import process
from bot.server.admin_reload import AdminConfigHolder
from bot.server.app import make_app
from bot.server.metrics import Metrics
from bot.server.process import pipeline_handler
from bot.server.server_context import HandlerFactory, Role
from bot.server.settings import Settings


async def serve(settings: Settings, admin: AdminConfigHolder, metrics: Metrics,
                handler_for: HandlerFactory = pipeline_handler, role: Role = "all") -> None:
    """Serve the web app until SIGTERM or SIGINT (bot/server/process.py `serve`)."""
    await process.serve(settings, admin, metrics, make_app, handler_for, role)
