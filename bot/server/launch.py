"""`reviewer serve` and `reviewer worker` from their command lines: the settings are read and
checked before anything else is imported, so that a refusal (exit 2: the webhook secret, the
GitHub App's id or key missing, a bad value, a split role on SQLite) comes in a fraction of the
start-up, and the role's app (bot/server/app.py, or bot/server/core.py for a worker) is imported
only by a process that will serve it. The rest of the process is bot/server/process.py.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from bot.server import logging as log
from bot.server.context import AppFactory, Role
from bot.server.settings import SettingsError, load_settings
from bot.store import is_postgres

# each role's app, "module:function", imported once the settings are checked
APPS: dict[Role, str] = {"all": "bot.server.app:make_app", "web": "bot.server.app:make_app",
                         "worker": "bot.server.core:core_app"}


def run_serve(args: argparse.Namespace) -> int:
    """`reviewer serve` (`--no-workers`: the web role only)."""
    return run(args, "web" if getattr(args, "no_workers", False) else "all")


def run_worker(args: argparse.Namespace) -> int:
    """`reviewer worker`: jobs only (bot/server/core.py `core_app`)."""
    return run(args, "worker")


def app_factory(role: Role) -> AppFactory:
    """The role's app factory, imported now."""
    module, name = APPS[role].split(":")
    factory: AppFactory = getattr(importlib.import_module(module), name)
    return factory


def run(args: argparse.Namespace, role: Role) -> int:
    """The process, from its command line to its exit code (bot/server/process.py's docstring)."""
    log.configure()
    command = "reviewer worker" if role == "worker" else "reviewer serve"
    try:
        settings = load_settings(config_file=getattr(args, "config", None), port=getattr(args, "port", None),
                                 host=getattr(args, "host", None), require_app=True)
    except SettingsError as exc:
        for problem in exc.problems:
            error(problem, command)
        return 2
    log.configure(level=logging.getLevelName(settings.log_level))  # REVIEWER_LOG_LEVEL, from here on
    log.register_secret(*settings.secrets())
    if role != "all" and not is_postgres(settings.database_url):
        error(f"{'--no-workers' if role == 'web' else 'reviewer worker'} needs a store shared by every process: "
              "set REVIEWER_DATABASE_URL=postgresql://user:password@host:5432/database", command)
        return 2
    from bot.server import process  # the rest of the process: only once the settings are usable

    return process.run(settings, role, app_factory(role), lambda message: error(message, command))


def error(message: str, command: str = "reviewer serve") -> None:
    print(f"{command}: error: {message}", file=sys.stderr)
