"""SARIF uploads: what each costs `reviewer serve` in memory and time, by size and shape, and how a
store-backed request fares while hostile uploads are decoded — this checkout against a baseline
measured in the same run (`--baseline-ref main` checks that ref out in a temporary git worktree).

Each version runs as its own `reviewer serve` process (SQLite, a fresh GitHub App key, GitHub
unreachable: an `installation` delivery tells it the repository is installed). For each shape the
upload is sent alone; the figures are the wall time to its answer, the server's own peak resident
memory above what it held before (VmHWM, reset through /proc/PID/clear_refs before each upload),
and the peak of any child process it started meanwhile (sampled every 5 ms: the decode child of
bot/analyzers/isolated.py; the baseline decodes in the server itself). Then a batch of hostile
uploads is sent at once while a signed-in console session is looked up over and over
(`GET /v1/webapi/session`: a sign-in store read on its worker thread), and the lookups' median and
slowest times are printed with the server's and its children's peaks.

The shapes: `[{},{},…]` under and over the container cap, two-character strings, thousands of
empty gzip members, and a realistic SARIF log of ruff-like results.

Usage: python bench/uploads.py [--baseline-ref REF] [--batch N] [--lookups-only]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bench.webhooks import fresh_app_key  # noqa: E402

SECRET = "bench-upload-webhook-secret"
TOKEN = "bench-uploads-admin-token-0123456789abcdef"
SHA = "ab" * 20
MiB = 1024 * 1024
INSTALLATION = ROOT / "tests" / "data" / "webhooks" / "installation.created.json"  # GitHub's own example


# --- uploads ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    name: str
    head: bytes
    item: bytes
    count: int
    tail: bytes
    members: int = 1

    def body(self) -> bytes:
        """The upload's body: gzip members made a block at a time (the document is never whole here)."""
        parts = []
        per = -(-self.count // self.members) if self.count else 0
        block = b",".join([self.item] * 10_000)
        written = 0
        for member in range(self.members):
            deflate = zlib.compressobj(1, zlib.DEFLATED, 31)
            out = [deflate.compress(self.head if member == 0 else b"")]
            n = max(0, min(per, self.count - member * per))
            for start in range(0, n, 10_000):
                taken = min(10_000, n - start)
                out.append(deflate.compress((b"," if written else b"") +
                                            (block if taken == 10_000 else b",".join([self.item] * taken))))
                written += taken
            out.append(deflate.compress(self.tail if member == self.members - 1 else b"") + deflate.flush())
            parts.append(b"".join(out))
        sarif = base64.b64encode(b"".join(parts)).decode()
        return json.dumps({"commit_sha": SHA, "ref": "refs/heads/bench", "sarif": sarif}).encode()

    @property
    def inflated(self) -> int:
        return len(self.head) + len(self.tail) + self.count * len(self.item) + max(self.count - 1, 0)


RUN = b'{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":['
RUFF_LIKE = json.dumps({"ruleId": "F401", "level": "warning", "message": {"text": "`os` imported but unused"},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": "src/app.py"},
                                                            "region": {"startLine": 3, "startColumn": 8}}}],
                        "partialFingerprints": {"primaryLocationLineHash": "0123456789abcdef:1"}}).encode()
SHAPES = [
    Shape("realistic 2,000 results", RUN, RUFF_LIKE, 2_000, b"]}]}"),
    Shape("realistic 20,000 results", RUN, RUFF_LIKE, 20_000, b"]}]}"),
    Shape("[{},…] 900k objects", RUN, b"{}", 900_000, b"]}]}"),
    Shape("[{},…] 3M objects", RUN, b"{}", 3_000_000, b"]}]}"),
    Shape('["ab",…] 40 MB', b"[", b'"ab"', 8_000_000, b"]"),
    Shape("60,000 empty gzip members", RUN, b"", 0, b"]}]}", members=60_000),
]
BATCH = Shape('["ab",…] 40 MB', b"[", b'"ab"', 8_000_000, b"]")


# --- the server -----------------------------------------------------------------------------------

def _vm(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


class Sampler:
    """The peak resident memory of a process's children, sampled every 5 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            total = 0
            for child in _children(self.pid):
                with contextlib.suppress(OSError):
                    total += _vm(child, "VmRSS")
            self.peak = max(self.peak, total)
            time.sleep(0.005)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    pid: int
    database: Path

    def reset_peak(self) -> int:
        """Reset VmHWM to what the process holds now; returns that."""
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")
        return _vm(self.pid, "VmRSS")

    def peak(self) -> int:
        return _vm(self.pid, "VmHWM")


@contextlib.contextmanager
def serving(code: str, tmp: str) -> Iterator[Server]:
    private, _ = fresh_app_key()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT"))}
    env.update(PYTHONPATH=code, GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=private,
               GITHUB_API_URL="http://127.0.0.1:9", PORT="0", REVIEWER_ADMIN_TOKEN=TOKEN,
               REVIEWER_DATABASE_URL=f"sqlite:///{tmp}/reviewer.db")
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=tmp, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("{") and json.loads(line)["msg"] == "listening":
            threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()  # type: ignore[union-attr]
            break
    else:
        raise SystemExit(f"{code}: reviewer serve stopped before listening")
    try:
        yield Server(proc, f"http://127.0.0.1:{json.loads(line)['port']}", proc.pid, Path(tmp) / "reviewer.db")
    finally:
        proc.terminate()
        proc.wait(timeout=60)


async def _installed(http: aiohttp.ClientSession, url: str) -> str:
    """Deliver GitHub's example `installation` event; the repository the uploads name."""
    body = INSTALLATION.read_bytes()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    async with http.post(url + "/webhook", data=body, headers={
            "X-GitHub-Event": "installation", "X-GitHub-Delivery": "bench-installation",
            "X-Hub-Signature-256": signature, "Content-Type": "application/json"}) as response:
        assert response.status == 202, await response.text()
    return str(json.loads(body)["repositories"][0]["full_name"])


async def _upload(http: aiohttp.ClientSession, url: str, repo: str, body: bytes) -> tuple[int, str]:
    async with http.post(f"{url}/v1/repos/{repo}/code-scanning/sarifs", data=body,
                         headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}) as response:
        answer = await response.json()
        return response.status, (answer.get("errors") or [{}])[0].get("code", "") or answer.get("message", "")[:40]


async def _ready(database: Path) -> None:
    """The dispatcher records the installation a moment after its 202: until then an upload would
    ask GitHub (unreachable here, retried) which installation reaches the repository."""
    for _ in range(600):
        with contextlib.suppress(sqlite3.Error), sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
            if conn.execute("SELECT count(*) FROM installations").fetchone()[0]:
                return
        await asyncio.sleep(0.05)
    raise SystemExit("the installation was never recorded")


async def _signed_in(http: aiohttp.ClientSession, url: str) -> str:
    async with http.post(url + "/console/login/token", data={"token": TOKEN, "next": "/console/"},
                         headers={"Origin": url}, allow_redirects=False) as response:
        assert response.status == 303, await response.text()
        return response.cookies["reviewer_session"].value


@dataclass
class Figures:
    seconds: float
    server: int
    children: int
    status: str


async def measure(server: Server, shapes: list[Shape], batch: int) -> tuple[dict[str, Figures], dict[str, float]]:
    out: dict[str, Figures] = {}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=900)) as http:
        repo = await _installed(http, server.url)
        await _ready(server.database)
        for shape in shapes:
            body = shape.body()
            held = server.reset_peak()
            with Sampler(server.pid) as sampler:
                started = time.perf_counter()
                status, code = await _upload(http, server.url, repo, body)
                seconds = time.perf_counter() - started
            out[shape.name] = Figures(seconds, server.peak() - held, sampler.peak, f"{status} {code}")
        cookie = await _signed_in(http, server.url)
        lookups = await _lookups_during_batch(http, server, repo, cookie, batch)
    return out, lookups


async def _lookups_during_batch(http: aiohttp.ClientSession, server: Server, repo: str, cookie: str,
                                batch: int) -> dict[str, float]:
    body = BATCH.body()
    held = server.reset_peak()
    times: list[float] = []
    with Sampler(server.pid) as sampler:
        uploads = asyncio.gather(*(_upload(http, server.url, repo, body) for _ in range(batch)))
        started = time.perf_counter()
        while not uploads.done():
            began = time.perf_counter()
            async with http.get(server.url + "/v1/webapi/session", cookies={"reviewer_session": cookie}) as response:
                assert response.status == 200, response.status
            times.append(time.perf_counter() - began)
            await asyncio.sleep(0.02)
        answers = await uploads
    return {"median": statistics.median(times), "slowest": max(times), "lookups": len(times),
            "seconds": time.perf_counter() - started, "server": server.peak() - held, "children": sampler.peak,
            "busy": sum(1 for status, _ in answers if status == 503)}


# --- the report -------------------------------------------------------------------------------------

def _row(name: str, shape: Shape | None, columns: dict[str, Figures]) -> str:
    size = f"{shape.inflated / MiB:7.1f} MiB" if shape else ""
    cells = [f"{f.seconds:7.2f} s {f.server / MiB:7.0f} MiB srv {f.children / MiB:5.0f} MiB child  {f.status:<18}"
             for f in columns.values()]
    return f"{name:<28} {size:>12}  " + " | ".join(cells)


def report(results: dict[str, tuple[dict[str, Figures], dict[str, float]]]) -> None:
    names = list(results)
    print(f"{'shape':<28} {'inflated':>12}  " + " | ".join(f"{n:<58}" for n in names))
    for shape in SHAPES:
        print(_row(shape.name, shape, {n: results[n][0][shape.name] for n in names}))
    print()
    for name in names:
        lookups = results[name][1]
        print(f"{name}: {lookups['lookups']:.0f} session lookups while {BATCH.name} uploads were decoded "
              f"({lookups['seconds']:.1f} s, {lookups['busy']:.0f} answered 503): median "
              f"{lookups['median'] * 1000:.0f} ms, slowest {lookups['slowest'] * 1000:.0f} ms; server peak "
              f"+{lookups['server'] / MiB:.0f} MiB, children {lookups['children'] / MiB:.0f} MiB")
    if len(names) == 2:
        base, new = (results[n][1] for n in names)
        print(f"slowest lookup: {new['slowest'] / base['slowest']:.3f}x the baseline's; server peak during the "
              f"batch: {(new['server'] + new['children']) / max(base['server'] + base['children'], 1):.3f}x "
              "(server and children)")


def baseline_checkout(ref: str, into: str) -> str:
    path = str(Path(into) / "baseline")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", path, ref], check=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-ref")
    parser.add_argument("--batch", type=int, default=4, help="hostile uploads sent at once (default 4)")
    args = parser.parse_args()
    results: dict[str, tuple[dict[str, Figures], dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        codes = {}
        if args.baseline_ref:
            codes[f"baseline {args.baseline_ref}"] = baseline_checkout(args.baseline_ref, tmp)
        codes["this checkout"] = str(ROOT)
        try:
            for name, code in codes.items():
                work = Path(tmp) / name.replace(" ", "-")
                work.mkdir()
                with serving(code, str(work)) as server:
                    results[name] = asyncio.run(measure(server, SHAPES, args.batch))
                print(f"{name}: measured", flush=True)
        finally:
            if args.baseline_ref:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                codes[f"baseline {args.baseline_ref}"]], check=False)
    report(results)


if __name__ == "__main__":
    main()
