"""Real `reviewer serve --no-workers` and `reviewer worker` processes on PostgreSQL, against the
GitHub double: start them, read their JSON logs on a thread (a full pipe would stall them), stop them.

They run the job queue's timings scaled down (TIMINGS: production's heartbeat, stall and sweep of
5, 20 and 10 s become 1, 6 and 2 s; bot/server/jobs/queue_timings.py), and every wait of the tests that
is about those timings is derived from TIMINGS, never written as a number of seconds.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg

from bot.server.jobs.queue_timings import GRACE_KEY, HEARTBEAT_KEY, STALLED_KEY, SWEEP_KEY, QueueTimings
from tests.support.app_support import World
from tests.support.process_support import app_env

TIMINGS = QueueTimings(heartbeat=1.0, stalled_after=6.0, sweep_every=2.0)  # the grace stays production's
# By then a worker silent since the start of the span is dead and a sweep has retried its jobs (the
# sweeping worker steady for `stalled_after`, then a sweep, a heartbeat's slack): 35 s in production.
DEAD_AND_SWEPT = TIMINGS.stalled_after + TIMINGS.sweep_every + TIMINGS.heartbeat
ONE_MORE_SWEEP = TIMINGS.sweep_every + TIMINGS.heartbeat  # every worker has swept once more by then
assert DEAD_AND_SWEPT < TIMINGS.grace  # jobs held that long still end within a graceful stop


def queue_env(timings: QueueTimings = TIMINGS) -> dict[str, str]:
    """The REVIEWER_QUEUE_* settings of `timings`."""
    return {HEARTBEAT_KEY: str(timings.heartbeat), STALLED_KEY: str(timings.stalled_after),
            SWEEP_KEY: str(timings.sweep_every), GRACE_KEY: str(timings.grace)}


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
        self.stop()
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        """SIGTERM, without waiting for the process to end."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)


def world_env(world: World, private_key: str, database_url: str, **extra: str) -> dict[str, str]:
    """An app process's settings for `world`, two workers a process, the queue's timings scaled down."""
    return app_env(world, private_key, database_url, REVIEWER_WORKERS="2", **{**queue_env(), **extra})


def web(world: World, private_key: str, database_url: str, **extra: str) -> Proc:
    return Proc(["serve", "--no-workers"], world_env(world, private_key, database_url, **extra), world.tmp)


def worker(world: World, private_key: str, database_url: str, **extra: str) -> Proc:
    return Proc(["worker"], world_env(world, private_key, database_url, **extra), world.tmp)


COMPARE = "GET /repos/{owner}/{repo}/compare/{basehead}"
REVIEWS = "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews"
COMPLETE = "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"


@contextlib.contextmanager
def processes(*procs_made: Callable[[], Proc]) -> Iterator[list[Proc]]:
    """The processes made in turn, all killed at the end; on a failure, what each said."""
    procs: list[Proc] = []
    try:
        for make in procs_made:
            procs.append(make())
        yield procs
    except BaseException:  # say what the processes said: a failure here is otherwise opaque
        for proc in procs:
            print(f"--- {proc.proc.args}:\n" + "".join(proc.lines[-40:]))
        raise
    finally:
        for proc in procs:
            proc.kill()


def deliveries(url: str) -> dict[str, tuple[str, int]]:
    """Each delivery's (state, attempts) in the shared database."""
    with psycopg.connect(url) as conn:
        return {d: (s, a) for d, s, a in conn.execute("SELECT delivery_id, state, attempts FROM deliveries")}


async def deliver_to(world: World, url: str, pr, delivery_id: str) -> int:
    """A `pull_request` `opened` delivery for `pr` to the web process at `url`; its status."""
    payload = world.github.payload("pull_request", "opened", installation=world.installation, pull=pr)
    status, _ = await world.github.deliver(url + "/webhook", "pull_request", payload,
                                           secret=world.app.webhook_secret, delivery_id=delivery_id)
    return status
