"""Real `reviewer serve --no-workers` and `reviewer worker` processes on PostgreSQL, against the
GitHub double: start them, read their JSON logs on a thread (a full pipe would stall them), stop them."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.support.app_support import World
from tests.support.process_support import app_env


class Proc:
    """One server process; `lines` are its log lines so far."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "bot", *args], env=env, cwd=cwd,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self.port: int | None = None
        self._listening = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self._listening.wait(30) or self.port is None:
            self.kill()
            raise AssertionError("the process stopped before listening:\n" + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.startswith("{") and json.loads(line).get("msg") == "listening":
                self.port = json.loads(line)["port"]
                self._listening.set()
        self._listening.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def messages(self) -> list[str]:
        return [json.loads(line).get("msg", "") for line in self.lines if line.startswith("{")]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self, timeout: float = 70) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)


def world_env(world: World, private_key: str, database_url: str, **extra: str) -> dict[str, str]:
    """An app process's settings for `world`, two workers a process."""
    return app_env(world, private_key, database_url, REVIEWER_WORKERS="2", **extra)


def web(world: World, private_key: str, database_url: str, **extra: str) -> Proc:
    return Proc(["serve", "--no-workers"], world_env(world, private_key, database_url, **extra), world.tmp)


def worker(world: World, private_key: str, database_url: str, **extra: str) -> Proc:
    return Proc(["worker"], world_env(world, private_key, database_url, **extra), world.tmp)
