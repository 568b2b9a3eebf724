"""Webhook intake throughput and p99 latency: `reviewer serve` against a bare aiohttp handler.

Both servers run as their own process, started the same way, and the load generator in this one:
64 keep-alive connections on loopback send signed ~24 KB bodies made from GitHub's example
pull_request payload, each with a fresh delivery id, a bounded number of requests, then stop.
The bare server only verifies the signature and answers 202. Ours is `reviewer serve`'s own serve
loop and app (intake, store, dispatcher, workers) with a job handler that does nothing, so the
pipeline's GitHub calls are not measured; it commits every delivery before its 202, which is
checked by counting the rows in its database as soon as the load ends. Bare and ours alternate
for a few rounds (the machine is shared, so the best of each is compared); each line also gives
the server's CPU time per request, which other load on the machine disturbs less, and how long
the dispatcher and workers took to handle the backlog once the load stopped.

The same runs on PostgreSQL (`--backend postgresql`, or `both`, the default): `reviewer serve` on
a database of its own at REVIEWER_BENCH_POSTGRES_URL (default the local server), each delivery
committed (synchronous_commit on) before its 202. Aims: >= 0.5x the bare handler on SQLite,
>= 0.3x on PostgreSQL.

Then the REST calls the real pipeline makes for one pull request of 10 files, with the installation
token already cached, a `.reviewer.yaml` that references no file and no agent file in the
repository: the app against the GitHub double (tests/support/github_double), a first pull request opened to
warm the token cache, then the measured one (aim: at most 5 calls).

Usage: python bench/webhooks.py [--requests N] [--connections C] [--rounds R] [--backend B] [--calls-only]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

SECRET = "bench-webhook-secret"
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing


# --- payloads -----------------------------------------------------------------------------------

EXAMPLE = ROOT / "tests" / "data" / "webhooks" / "pull_request.synchronize.json"  # GitHub's own example


def pull_request_payload(number: int) -> bytes:
    """GitHub's example `pull_request.synchronize`, for pull request `number` with its own head."""
    payload = json.loads(EXAMPLE.read_text())
    payload["number"] = payload["pull_request"]["number"] = number
    payload["pull_request"]["head"]["sha"] = payload["after"] = hashlib.sha1(str(number).encode()).hexdigest()
    return json.dumps(payload).encode()  # compact, as GitHub sends it


# --- servers ------------------------------------------------------------------------------------

def serve_bare(port: int) -> None:
    """The baseline: verify the signature, answer 202, nothing else."""
    from aiohttp import web

    secret = SECRET.encode()

    async def webhook(request: web.Request) -> web.Response:
        body = await request.read()
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, request.headers.get("X-Hub-Signature-256", "")):
            return web.Response(status=401)
        return web.Response(status=202, text="accepted\n")

    app = web.Application(client_max_size=25 * 1024 * 1024)
    app.router.add_post("/webhook", webhook)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def serve_ours(port: int, database_url: str) -> None:
    """`reviewer serve`'s own serve loop and app, with a job handler that does nothing, so that
    the intake, store, dispatcher and workers are measured and not the pipeline's GitHub calls."""
    from bot.server import logging as log
    from bot.server.admin_reload import AdminConfigHolder
    from bot.server.app import make_app
    from bot.server.metrics import Metrics
    from bot.server.process import serve
    from bot.server.settings import load_settings

    async def handle(job) -> None:
        return None

    log.configure()
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": SECRET, "PORT": str(port), "REVIEWER_DATABASE_URL": database_url})
    metrics = Metrics()
    asyncio.run(serve(settings, AdminConfigHolder(None, metrics), metrics, make_app, handler_for=lambda context: handle))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start listening")


# --- load ---------------------------------------------------------------------------------------

async def load(port: int, bodies: list[bytes], total: int, connections: int) -> tuple[list[float], dict[int, int], float]:
    """Closed loop: each connection sends its next request when the previous is answered."""
    signed = [(b, ("sha256=" + hmac.new(SECRET.encode(), b, hashlib.sha256).hexdigest()).encode()) for b in bodies]
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    counter = iter(range(total))

    async def connection() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for i in counter:
                body, sig = signed[i % len(signed)]
                head = (b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        b"User-Agent: GitHub-Hookshot/bench\r\nX-GitHub-Event: pull_request\r\n"
                        b"X-GitHub-Delivery: " + str(uuid.uuid4()).encode() + b"\r\nX-Hub-Signature-256: " + sig +
                        b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
                began = time.perf_counter()
                writer.write(head + body)
                response = await reader.readuntil(b"\r\n\r\n")
                status = int(response[9:12])
                length = 0
                for line in response.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                latencies.append(time.perf_counter() - began)
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    began = time.perf_counter()
    await asyncio.gather(*(connection() for _ in range(connections)))
    return latencies, statuses, time.perf_counter() - began


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux), to compare the work per request."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(name: str, command: list[str], env: dict[str, str], port: int, bodies: list[bytes],
            total: int, connections: int, log_path: Path) -> dict:
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, env=env, stdout=log, stderr=log, cwd=ROOT)
    try:
        wait_listening(port, proc)
        asyncio.run(load(port, bodies, min(1000, total), connections))  # warm-up, not counted
        cpu = cpu_seconds(proc.pid)
        latencies, statuses, elapsed = asyncio.run(load(port, bodies, total, connections))
        cpu = cpu_seconds(proc.pid) - cpu
    except BaseException:
        stop(proc)
        raise
    latencies.sort()
    return {"name": name, "proc": proc, "rps": len(latencies) / elapsed, "cpu_us": cpu / total * 1e6,
            "p50": latencies[len(latencies) // 2] * 1000, "p99": latencies[int(len(latencies) * 0.99) - 1] * 1000,
            "max": latencies[-1] * 1000,
            "statuses": statuses, "requests": total}


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


OPEN = "SELECT count(*) FROM deliveries WHERE state IN ('received', 'queued', 'running')"


def count(url: str, query: str) -> int:
    """One number from the server's database (read-only on SQLite)."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(f"file:{url[len('sqlite:///'):]}?mode=ro", uri=True) as conn:
            return conn.execute(query).fetchone()[0]
    import psycopg
    with psycopg.connect(url) as conn:
        row = conn.execute(query).fetchone()  # type: ignore[arg-type]
        return row[0] if row else 0


def drain_seconds(url: str, timeout: float = 120) -> float | None:
    """How long the dispatcher and workers take to finish the backlog once the load stops."""
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        if not count(url, OPEN):
            return time.monotonic() - began
        time.sleep(0.05)
    return None


@contextlib.contextmanager
def database(backend: str, tmp: str, n: int) -> Iterator[str]:
    """A fresh database for one run: a file, or a PostgreSQL database created and dropped."""
    if backend == "sqlite":
        yield f"sqlite:///{Path(tmp, f'bench-{n}.db')}"
        return
    from tests.support.postgres_support import fresh_database
    with fresh_database(os.environ.get("REVIEWER_BENCH_POSTGRES_URL", PG_DEFAULT)) as url:
        yield url


PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432/postgres"


def run_ours(tmp: str, env: dict[str, str], bodies: list[bytes], args: argparse.Namespace, n: int,
             backend: str = "sqlite") -> dict:
    port = free_port()
    with database(backend, tmp, n) as url:
        r = measure(f"ours {backend}", [sys.executable, __file__, "--serve-ours", str(port), url], env,
                    port, bodies, args.requests, args.connections, Path(tmp, f"ours-{backend}-{n}.log"))
        r["stored"] = count(url, "SELECT count(*) FROM deliveries")  # before stopping: committed rows only
        r["drain"] = drain_seconds(url)
        stop(r["proc"])
    return r


def run_bare(tmp: str, env: dict[str, str], bodies: list[bytes], args: argparse.Namespace, n: int) -> dict:
    port = free_port()
    r = measure("bare", [sys.executable, __file__, "--serve-bare", str(port)], env, port, bodies,
                args.requests, args.connections, Path(tmp, f"bare-{n}.log"))
    stop(r["proc"])
    return r


# --- REST calls for one pull request -----------------------------------------------------------

CALLS_AIM = 5
CALLS_CONFIG = """\
rules:
  - id: python-style
    rule: Functions have type hints.
    paths: ["**/*.py"]
ignore: ["**/*.lock"]
"""


def fresh_app_key() -> tuple[str, str]:
    """A GitHub App key pair (private PEM, public PEM) made for this run: no key is ever stored."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public.decode()


async def pull_request_calls() -> tuple[list, object, list[str]]:
    """(the calls for the second pull request, its check run, requests GitHub's description refuses)."""
    from tests.support.app_support import running_app
    from tests.support.github_double import GitHubDouble

    private, public = fresh_app_key()
    github = GitHubDouble()
    await github.start()
    try:
        github_app = github.add_app(public)
        with tempfile.TemporaryDirectory() as tmp:
            async with running_app(Path(tmp), github, github_app, private) as world:
                warm = world.pull({".reviewer.yaml": CALLS_CONFIG})  # the first job fetches the token
                await world.opened(warm)
                await world.completed_run(warm)
                before = len(github.calls)
                pr = world.pull({".reviewer.yaml": CALLS_CONFIG},
                                {f"src/module_{i}.py": f"VALUE = {i}\n" for i in range(10)})
                await world.opened(pr)
                run = await world.completed_run(pr)
                calls = github.calls[before:]
    finally:
        await github.close()
    return calls, run, github.violations


def report_calls() -> bool:
    """Print the calls and the count against the aim; False when the run did not complete cleanly."""
    calls, run, violations = asyncio.run(pull_request_calls())
    print(f"REST calls for a pull request of 10 files (token cached, no referenced or agent files): "
          f"check run {run.conclusion if run else 'NOT COMPLETED'}")
    for number, call in enumerate(calls, 1):
        query = "?" + "&".join(f"{k}={v}" for k, v in call.query.items()) if call.query else ""
        print(f"  {number}. {call.status} {call.method} {call.path}{query}")
    print(f"calls {len(calls)} ({'meets' if len(calls) <= CALLS_AIM else 'misses'} the aim of at most {CALLS_AIM})")
    for violation in violations:
        print(f"  refused by GitHub's REST description: {violation}")
    return run is not None and not violations


def line(r: dict) -> str:
    return (f"{r['name']:>15}: {r['rps']:7.0f} req/s   p50 {r['p50']:6.2f} ms   p99 {r['p99']:6.2f} ms   "
            f"max {r['max']:6.2f} ms   server CPU {r['cpu_us']:4.0f} us/request")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10000)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="alternate bare/ours this many times; best of each")
    parser.add_argument("--calls-only", action="store_true", help="only print the REST calls for one pull request")
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--serve-bare", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--serve-ours", nargs=2, metavar=("PORT", "DATABASE_URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.serve_bare)
        return 0
    if args.serve_ours:
        serve_ours(int(args.serve_ours[0]), args.serve_ours[1])
        return 0
    if args.calls_only:
        return 0 if report_calls() else 1

    bodies = [pull_request_payload(n) for n in range(1, 65)]
    warmup = min(1000, args.requests)
    print(f"{args.requests} requests (+{warmup} warm-up) per run, {args.connections} connections, "
          f"bodies ~{sum(map(len, bodies)) // len(bodies)} bytes, {args.rounds} rounds alternating")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT"))}
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    bares: list[dict] = []
    ours: dict[str, list[dict]] = {backend: [] for backend in backends}
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            bares.append(run_bare(tmp, env, bodies, args, n))
            print(f"round {n + 1}\n{line(bares[-1])}")
            ok = ok and bares[-1]["statuses"].get(202) == args.requests
            for backend in backends:
                ours[backend].append(run_ours(tmp, env, bodies, args, n, backend))
                o = ours[backend][-1]
                durable = o["stored"] == o["statuses"].get(202, 0) + warmup and o["statuses"].get(202) == args.requests
                ok = ok and durable
                drain = f"{o['drain']:.1f} s" if o["drain"] is not None else "not within 120 s"
                print(f"{line(o)}\n{'':>17}stored {o['stored']} rows = "
                      f"{'every 202 committed' if durable else 'MISMATCH'}; backlog handled {drain} after the load")

    def best(runs):
        return {**max(runs, key=lambda r: r["rps"]), "p99": min(r["p99"] for r in runs),
                "max": min(r["max"] for r in runs), "cpu_us": min(r["cpu_us"] for r in runs)}
    b = best(bares)
    print(f"best of {args.rounds}\n{line(b)}")
    for backend in backends:
        o = best(ours[backend])
        aim = 0.5 if backend == "sqlite" else 0.3
        print(f"{line(o)}\n{'':>17}ratio throughput {o['rps'] / b['rps']:.2f}x (aim >= {aim}x)   ratio p99 "
              f"{o['p99'] / b['p99']:.2f}x (aim <= 3x)   ratio CPU/request {o['cpu_us'] / b['cpu_us']:.2f}x")
    ok = report_calls() and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
