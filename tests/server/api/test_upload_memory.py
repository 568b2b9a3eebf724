"""`reviewer serve` under hostile SARIF uploads holds its memory (docs/analyzers.md "What bounds an
upload"): small bodies that cost much once read — `[{},{},…]`, strings of two characters, many gzip
members — sent at once, and the server's own peak memory (VmHWM, read from /proc) grows by no more
than the bodies it admits and the results it may hand back, while each decode's child stays within
REVIEWER_UPLOAD_MEMORY_MIB (scaled down here) and says so in its refusal."""

from __future__ import annotations

import asyncio
import base64
import json
import zlib

import aiohttp
import pytest

from bot.analyzers.isolated import MAX_OUTPUT_BYTES
from bot.server.api.uploads import WAITING_PER_DECODE
from tests.support.analyzers_support import SHA
from tests.support.app_support import installed
from tests.support.process_support import app_env, start, stop

pytestmark = pytest.mark.slow  # a `reviewer serve` process of its own: `make test-fast` leaves it out

MiB = 1024 * 1024
TOKEN = "upload-memory-admin-token-0123456789abcdef"
MEMORY_MIB = 96  # REVIEWER_UPLOAD_MEMORY_MIB, scaled down
DECODES = 1


def _peak(pid: int) -> int:
    """The process's peak resident memory so far, in bytes (VmHWM)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc")


def _body(head: bytes, item: bytes, count: int, tail: bytes, members: int = 1) -> bytes:
    """An upload of `head` + `count` times `item` (comma-separated) + `tail`, gzipped as `members`
    members, without the document ever being whole in the test's memory."""
    parts: list[bytes] = []
    per = -(-count // members)
    for member in range(members):
        deflate = zlib.compressobj(1, zlib.DEFLATED, 31)
        n = min(per, count - member * per)
        out = [deflate.compress(head if member == 0 else b",")]
        block = b",".join([item] * 10_000)
        for first in range(0, n, 10_000):
            taken = min(10_000, n - first)
            out.append(deflate.compress((b"," if first else b"") + (block if taken == 10_000
                                                                     else b",".join([item] * taken))))
        out.append(deflate.compress(tail if member == members - 1 else b"") + deflate.flush())
        parts.append(b"".join(out))
    sarif = base64.b64encode(b"".join(parts)).decode()
    return json.dumps({"commit_sha": SHA, "ref": "refs/heads/x", "sarif": sarif}).encode()


def _hostile() -> list[bytes]:
    run = b'{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":['
    objects = _body(run, b"{}", 900_000, b"]}]}")  # ~70 MB once parsed, 2.7 MB of text
    strings = _body(b"[", b'"ab"', 12_000_000, b"]")  # ~600 MB once parsed, 60 MB of text
    return [objects, strings, _body(run, b"{}", 900_000, b"]}]}", members=64), strings, objects,
            _body(b"[", b'"ab"', 12_000_000, b"]", members=64)]


async def _upload(http: aiohttp.ClientSession, url: str, body: bytes) -> tuple[int, dict]:
    for _ in range(60):  # a busy server asks to come back: bounded, by its own Retry-After
        async with http.post(f"{url}/v1/repos/octo-org/example/code-scanning/sarifs", data=body,
                             headers={"Authorization": f"Bearer {TOKEN}",
                                      "Content-Type": "application/json"}) as response:
            if response.status != 503:
                return response.status, await response.json()
            await asyncio.sleep(min(float(response.headers["Retry-After"]), 0.5))
    raise AssertionError("the server stayed busy")


async def test_hostile_uploads_at_once_grow_the_server_by_no_more_than_what_it_admits(
        tmp_path, github, github_app, app_private_key):
    world = installed(tmp_path, github, github_app)
    env = app_env(world, app_private_key, f"sqlite:///{tmp_path / 'reviewer.db'}", REVIEWER_ADMIN_TOKEN=TOKEN,
                  REVIEWER_UPLOAD_DECODES=str(DECODES), REVIEWER_UPLOAD_MEMORY_MIB=str(MEMORY_MIB))
    proc, port, _ = start(["-m", "bot", "serve"], env, tmp_path)
    url = f"http://127.0.0.1:{port}"
    bodies = _hostile()
    try:
        async with aiohttp.ClientSession() as http:
            small = _body(b'{"version": "2.1.0", "runs": [', b"", 0, b"]}")
            assert (await _upload(http, url, small))[0] == 202  # warm: every module the route uses is loaded
            before = _peak(proc.pid)
            answers = await asyncio.gather(*(_upload(http, url, body) for body in bodies))
            after = _peak(proc.pid)
    finally:
        stop(proc)
    # What the server itself may hold: the bodies it admits at once (each read, then copied to the
    # child), and the results one decode hands back, with room for the interpreter's own churn.
    admitted = DECODES * (1 + WAITING_PER_DECODE)
    bound = admitted * 2 * max(len(b) for b in bodies) + DECODES * 2 * MAX_OUTPUT_BYTES + 48 * MiB
    assert after - before <= bound, f"grew by {(after - before) / MiB:.0f} MiB; bound {bound / MiB:.0f} MiB"
    for status, answer in answers:
        assert status in (400, 413), answer
    assert any(f"{MEMORY_MIB} MiB" in a["message"] for _, a in answers), answers  # the child's bound acted
