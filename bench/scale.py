"""Pull requests reviewed per minute on PostgreSQL with 1 and with 2 `reviewer worker` processes.

One `reviewer serve --no-workers` takes the deliveries; worker processes (REVIEWER_WORKERS jobs
each) run the real pipeline against the GitHub double, which answers every call after 50 ms, and a
chat-completions double that answers after 1 s. Pull requests are spread over several
installations, so GitHub's one-write-at-a-time per installation is not what is measured.

The ideal is what those latencies allow: one pull request alone is reviewed first to count its
GitHub calls and model calls; a job then needs at least calls × 50 ms + model calls × 1 s, and
`processes × REVIEWER_WORKERS` jobs run at once, so the ideal rate is
`60 × processes × workers / (seconds a job)`. Printed: the rate, the ideal, their ratio (aim
>= 0.8), and the ratio of 2 processes to 1 (aim >= 1.8).

Needs PostgreSQL: REVIEWER_BENCH_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres);
a database of its own is created for each run and dropped.

Usage: python bench/scale.py [--pulls N] [--workers C] [--installations I]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

GITHUB_LATENCY, MODEL_LATENCY = 0.05, 1.0
MODEL, KEY_VAR, KEY = "bench-model", "REVIEWER_BENCH_MODEL_KEY", "sk-bench-0000"
CONFIG = "rules:\n  - id: style\n    rule: Functions have type hints.\n    paths: ['**/*.py']\n"


@contextmanager
def database(server_url: str):
    import psycopg

    from tests.support.postgres_support import with_database
    name = f"reviewer_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(server_url, name)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def run(processes: int, pulls: int, workers: int, installations: int, server_url: str) -> dict:
    """Review `pulls` pull requests with `processes` workers; (rate, per-job calls) measured."""
    from bench.webhooks import fresh_app_key
    from tests.support.chat_double import ChatDouble, Reply, findings
    from tests.support.github_double import GitHubDouble

    private, public = fresh_app_key()
    github, chat = GitHubDouble(), ChatDouble()
    await github.start()
    await chat.start()
    chat.answer(MODEL, Reply(content=findings().content, delay=MODEL_LATENCY))
    procs: list = []
    try:
        app = github.add_app(public)
        with tempfile.TemporaryDirectory() as tmp, database(server_url) as url:
            try:
                elapsed, calls, model_calls = await _measure(github, chat, app, private, url, Path(tmp), procs,
                                                             processes, pulls, workers, installations)
            finally:  # before the database goes
                await _stop(procs)
    finally:
        await chat.close()
        await github.close()
    job_seconds = calls * GITHUB_LATENCY + model_calls * MODEL_LATENCY
    return {"processes": processes, "rate": pulls / elapsed * 60, "calls": calls, "model_calls": model_calls,
            "ideal": 60 * processes * workers / job_seconds, "job_seconds": job_seconds}


async def _measure(github, chat, app, private: str, url: str, tmp: Path, procs: list, processes: int, pulls: int,
                   workers: int, installations: int) -> tuple[float, int, int]:
    """(seconds for `pulls` pull requests, GitHub calls and model calls of one job alone)."""
    from tests.support.app_support import World
    from tests.support.scale_support import Proc, world_env

    admin = tmp / "admin.yaml"
    admin.write_text(f"providers:\n  local:\n    type: openai\n    baseUrl: {chat.base_url}\n"
                     f"    apiKey: env://{KEY_VAR}\n    timeout: 30\n"
                     f"defaults:\n  models:\n    review: local/{MODEL}\n")
    worlds = []
    for i in range(installations):
        world = World(github, app, "", tmp)
        world.repo = github.add_repo(f"bench-org-{i}/service")
        world.installation = github.install(app, world.repo)
        worlds.append(world)
    env = {**world_env(worlds[0], private, url, REVIEWER_ADMIN_CONFIG=str(admin)),
           "REVIEWER_WORKERS": str(workers), KEY_VAR: KEY}
    procs.append(Proc(["serve", "--no-workers"], env, tmp))
    procs += [Proc(["worker"], env, tmp) for _ in range(processes)]
    for world in worlds:
        world.url = procs[0].url

    def make(world):
        return world.pull({".reviewer.yaml": CONFIG}, {"src/app.py": "def add(a: int, b: int) -> int:\n"
                                                                      "    return b + a\n"})

    # one alone first: its calls, and the token of each installation fetched before timing
    for world in worlds:
        warm = make(world)
        await world.opened(warm)
        await world.completed_run(warm, timeout=120)
    github.delay(None, GITHUB_LATENCY, times=10 ** 9)
    before, model_before = len(github.calls), len(chat.requests)
    alone = make(worlds[0])
    await worlds[0].opened(alone)
    await worlds[0].completed_run(alone, timeout=120)
    calls, model_calls = len(github.calls) - before, len(chat.requests) - model_before

    prs = [(worlds[i % installations], make(worlds[i % installations])) for i in range(pulls)]
    began = time.monotonic()
    await asyncio.gather(*(world.opened(pr) for world, pr in prs))
    for world, pr in prs:
        await world.completed_run(pr, timeout=600)
    return time.monotonic() - began, calls, model_calls


async def _stop(procs: list) -> None:
    """SIGTERM every process, off the loop: a worker finishing its jobs calls the doubles served here."""
    stopped = await asyncio.gather(*(asyncio.to_thread(proc.terminate, 90) for proc in procs),
                                   return_exceptions=True)
    for proc, result in zip(procs, stopped, strict=True):
        if isinstance(result, BaseException):  # say what the process was doing, then stop it
            print(f"{proc.proc.args[3:]} did not stop on SIGTERM:\n" + "".join(proc.lines[-20:]))
            proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pulls", type=int, default=48)
    parser.add_argument("--workers", type=int, default=4, help="REVIEWER_WORKERS of each worker process")
    parser.add_argument("--installations", type=int, default=8)
    args = parser.parse_args()
    server_url = os.environ.get("REVIEWER_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    print(f"{args.pulls} pull requests over {args.installations} installations; GitHub answers after "
          f"{GITHUB_LATENCY * 1000:.0f} ms, the model after {MODEL_LATENCY:.0f} s; REVIEWER_WORKERS={args.workers}")
    results = []
    for n in (1, 2):
        results.append(r := asyncio.run(run(n, args.pulls, args.workers, args.installations, server_url)))
        print(f"{r['processes']} worker process(es): {r['rate']:6.1f} pull requests/minute   ideal "
              f"{r['ideal']:6.1f} ({r['calls']} GitHub calls + {r['model_calls']} model call(s) = "
              f"{r['job_seconds']:.2f} s a job)   ratio {r['rate'] / r['ideal']:.2f} (aim >= 0.8)")
    print(f"2 processes / 1: {results[1]['rate'] / results[0]['rate']:.2f}x (aim >= 1.8x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
