"""A worker process (`reviewer worker`, bot/server/worker.py) imports nothing of the web roles: not
the console, not sign-in, not the resource API, not the webhook's routes. It runs jobs; what it
loads it keeps for its life, and what it never loads it can never serve by mistake."""

from __future__ import annotations

import subprocess
import sys

import grimp

WEB_ONLY = ("bot.server.console", "bot.server.signin", "bot.server.resources", "bot.server.app",
            "bot.server.main", "bot.server.admin_api", "bot.server.analyses", "bot.server.home")


def test_the_worker_entry_point_reaches_no_web_module() -> None:
    graph = grimp.build_graph("bot")  # imports in functions and under TYPE_CHECKING count too
    reached = graph.find_upstream_modules("bot.server.worker")
    web = sorted(m for m in reached if m.startswith(WEB_ONLY))
    assert web == []
    assert "bot.server.core" in reached and "bot.pipeline" in reached  # it does reach what runs jobs


def loaded_by(command: str) -> list[str]:
    """The bot.server modules a fresh interpreter holds once it imported `command`'s module, as
    the CLI resolves it (bot/commands/cli.py COMMANDS)."""
    code = ("import importlib, sys; from bot.commands.cli import COMMANDS; "
            f"module, _ = COMMANDS[{command!r}].split(':'); importlib.import_module(module); "
            "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('bot.server.'))))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()


def test_reviewer_worker_loads_no_web_module() -> None:
    """The same, as the process sees it."""
    loaded = loaded_by("worker")
    assert "bot.server.worker" in loaded and "bot.server.core" in loaded
    assert [m for m in loaded if m.startswith(WEB_ONLY)] == []


def test_reviewer_serve_loads_the_console() -> None:
    """And the web process does load it: the check above can tell the two apart."""
    loaded = loaded_by("serve")
    assert "bot.server.console" in loaded and "bot.server.signin.routes" in loaded
