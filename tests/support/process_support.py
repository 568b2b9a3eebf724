"""`reviewer serve` (and `reviewer worker`) as a process of the test's own: its environment, started
until it says where it listens, stopped; the app's settings for a world of tests/support/app_support.py."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.support.app_support import World
from tests.support.chat_double import ChatDouble, findings
from tests.support.github_double.faults import Fault
from tests.support.review_support import API_KEY, BUG, KEY_VAR, PRIMARY, admin_yaml, config_pull
from tests.support.server_support import wait_for

ROOT = Path(__file__).resolve().parents[2]


def env(**values: str) -> dict[str, str]:
    """This environment without the app's own settings (the test's are `values`), the checkout importable."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT"))}
    return {**inherited, "PYTHONPATH": str(ROOT), **values}


def app_env(world: World, private_key: str, database_url: str, **extra: str) -> dict[str, str]:
    """The settings of an app process for `world` (its GitHub double and app), on any free port."""
    return env(GITHUB_WEBHOOK_SECRET=world.app.webhook_secret, GITHUB_APP_ID=str(world.app.id),
               GITHUB_PRIVATE_KEY=private_key, GITHUB_API_URL=world.github.url, PORT="0",
               REVIEWER_DATABASE_URL=database_url, **extra)


def start(args: list[str], environment: dict[str, str], cwd: Path) -> tuple[subprocess.Popen, int, list[str]]:
    """Start a server process and read its JSON log lines until it says where it listens."""
    proc = subprocess.Popen([sys.executable, *args], env=environment, cwd=cwd, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("{") and json.loads(line)["msg"] == "listening":
            return proc, json.loads(line)["port"], lines
    proc.wait()
    raise AssertionError("the server stopped before listening:\n" + "".join(lines))


def stop(proc: subprocess.Popen, how: signal.Signals = signal.SIGTERM) -> None:
    """Signal a process started by `start` (SIGTERM: let it finish; SIGKILL: no chance) and reap it."""
    proc.send_signal(how)
    proc.wait(timeout=30)
    proc.stderr.close()


def states(db: Path) -> dict[str, str]:
    """Each delivery's state in a SQLite database, read without taking a write lock."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return dict(conn.execute("SELECT delivery_id, state FROM deliveries"))


def a_bug_found(world: World, chat: ChatDouble) -> tuple[object, dict[str, str]]:
    """A pull request asking for detailed feedback, the model finding BUG in it; the settings that
    name the admin file (the chat double its provider) and the model's key, for the app's processes."""
    chat.answer(PRIMARY, findings(BUG))
    (world.tmp / "admin.yaml").write_text(admin_yaml(chat))
    extra = {"REVIEWER_ADMIN_CONFIG": str(world.tmp / "admin.yaml"), KEY_VAR: API_KEY}
    return config_pull(world, "feedback: detailed\n"), extra


async def caught(fault: Fault, timeout: float) -> None:
    """Wait (bounded) until a fault of the GitHub double (`delay`, `fail`) has caught every request
    it was set for: the process is inside that call."""
    async def done() -> bool:
        return fault.times == 0
    await wait_for(done, timeout=timeout)
