"""Decoding a SARIF upload in a child process with a memory and CPU limit: the server's side of
bot/analyzers/upload.py (docs/analyzers.md, "What bounds an upload").

An upload's body is at most the base64 of 10 MB of gzip, but what decoding it costs depends on
what it holds: inflated, counted and parsed, a small body can ask for gigabytes and minutes of
CPU. So the server never decodes in its own process: not on its event loop, nor on the thread pool
its stores use. One child per upload gets the raw body on stdin, limits its own address space and
CPU time before reading it, and writes back one JSON line (the upload's fields and counts, or the
problems) followed by the results as bot/analyzers/stored.py writes them, which the server stores
as they are, without parsing them again. A child that runs out of memory says so; one that is
killed (CPU time, a crash) or runs past the wall-clock timeout is a refusal naming the bound, and
the server goes on. The child starts isolated (`-I`), with an empty environment: it is handed
hostile bytes, and gets no secret of the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.analyzers.model import Problem
from bot.analyzers.stored import result_to_json
from bot.analyzers.upload import Upload, UploadLimits, decode_upload_body

DEFAULT_MEMORY_BYTES = 320 * 1024 * 1024  # REVIEWER_UPLOAD_MEMORY_MIB's default
CPU_SECONDS = 60
DEFAULT_TIMEOUT = 120.0
MAX_OUTPUT_BYTES = 32 * 1024 * 1024  # the results handed back, as JSON
_READ = 64 * 1024
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from bot.analyzers.isolated import main; main()"
WORKER_ARGS = (sys.executable, "-I", "-c", _BOOT, _PACKAGE_ROOT)
DEFAULT_LIMITS = UploadLimits()
_LIMIT_FIELDS = ("max_compressed_bytes", "max_inflated_bytes", "max_gzip_members", "max_json_containers")


class DecoderUnavailable(Exception):
    """The child could not be started (the server's trouble, not the upload's)."""


@dataclass(frozen=True)
class Decoded:
    """An accepted upload as the server needs it: its fields, and its results as stored JSON."""

    commit_sha: str
    ref: str
    pull_number: int | None
    tool_name: str | None
    tools: tuple[str, ...]
    results: int  # how many
    results_json: str  # a JSON array of bot/analyzers/stored.py's `result_to_json`


def _limit_self(memory: int, cpu: int) -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))


def _memory_problem(memory: int) -> Problem:
    return Problem("/sarif", "too-large", f"/sarif: reading the file needs more than the {memory // (1024 * 1024)} MiB "
                                          "of memory the server gives an upload")


def _decoded(upload: Upload) -> tuple[dict[str, Any], str]:
    header = {"upload": {"commit_sha": upload.commit_sha, "ref": upload.ref, "pull_number": upload.pull_number,
                         "tool_name": upload.tool_name, "tools": list(upload.tools), "results": len(upload.results)}}
    return header, json.dumps([result_to_json(r) for r in upload.results], ensure_ascii=False)


def main() -> None:
    """The child: the request's line, then the raw body, on stdin; the answer on stdout."""
    request = json.loads(sys.stdin.buffer.readline())
    memory = int(request["memory"])
    _limit_self(memory, int(request["cpu"]))
    given = request["limits"]
    limits = UploadLimits(max_compressed_bytes=int(given["max_compressed_bytes"]),
                          max_inflated_bytes=int(given["max_inflated_bytes"]),
                          max_gzip_members=int(given["max_gzip_members"]),
                          max_json_containers=int(given["max_json_containers"]))
    results = ""
    try:
        decoded = decode_upload_body(sys.stdin.buffer.read(), repository_url=request["repository_url"], limits=limits)
        if isinstance(decoded, list):
            header: dict[str, Any] = {"problems": [p.to_json() for p in decoded]}
        else:
            header, results = _decoded(decoded)
            del decoded
    except MemoryError:
        header, results = {"problems": [_memory_problem(memory).to_json()]}, ""
    out = sys.stdout.buffer
    out.write(json.dumps(header).encode("utf-8") + b"\n")
    out.write(results.encode("utf-8"))
    out.flush()


async def decode_isolated(raw: bytes, *, repository_url: str | None, memory_bytes: int = DEFAULT_MEMORY_BYTES,
                          limits: UploadLimits = DEFAULT_LIMITS, cpu_seconds: int = CPU_SECONDS,
                          timeout: float = DEFAULT_TIMEOUT, max_output: int = MAX_OUTPUT_BYTES) -> Decoded | list[Problem]:
    """`decode_upload_body` in a child limited to `memory_bytes` of address space and `cpu_seconds`
    of CPU, waited for at most `timeout`: the upload, or the problems that refuse it."""
    request = {"memory": memory_bytes, "cpu": cpu_seconds, "repository_url": repository_url,
               "limits": {key: getattr(limits, key) for key in _LIMIT_FIELDS}}
    try:
        proc = await asyncio.create_subprocess_exec(*WORKER_ARGS, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.DEVNULL, env={})
    except OSError as exc:
        raise DecoderUnavailable(f"the SARIF decoder could not start ({exc.strerror})") from None
    try:
        out = await asyncio.wait_for(_exchange(proc, json.dumps(request).encode() + b"\n", raw, max_output), timeout)
    except TimeoutError:
        return [Problem("/sarif", "too-large", f"/sarif: reading the file took longer than the {timeout:g} s the "
                                               "server gives an upload")]
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    if out is None:
        return [Problem("/sarif", "too-large", f"/sarif: the results take more than {max_output:,} bytes once read")]
    return _answer(out, proc.returncode, memory_bytes, cpu_seconds)


async def _exchange(proc: asyncio.subprocess.Process, request: bytes, raw: bytes, cap: int) -> bytes | None:
    """Feed the child and read its answer, at most `cap` bytes of results (None past them)."""
    assert proc.stdin is not None and proc.stdout is not None

    async def feed() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(request)
            proc.stdin.write(raw)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child stopped early (a limit): its exit says why
        finally:
            proc.stdin.close()

    feeding = asyncio.create_task(feed())
    try:
        out = bytearray()
        while chunk := await proc.stdout.read(_READ):
            out += chunk
            if len(out) > cap + 64 * 1024:  # the results, and room for the first line
                return None
        await proc.wait()
        return bytes(out)
    finally:
        feeding.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feeding


def _answer(out: bytes, returncode: int | None, memory: int, cpu: int) -> Decoded | list[Problem]:
    head, _, rest = out.partition(b"\n")
    try:
        header = json.loads(head) if returncode == 0 else None
    except ValueError:
        header = None
    if not isinstance(header, dict):  # killed by a limit (SIGXCPU, SIGKILL), or a crash
        return [Problem("/sarif", "too-large", f"/sarif: reading the file took more than the server gives an upload "
                                               f"({memory // (1024 * 1024)} MiB of memory, {cpu} s of CPU time)")]
    if "problems" in header:
        return [Problem(str(p["pointer"]), str(p["code"]), str(p["message"])) for p in header["problems"]]
    upload = header["upload"]
    return Decoded(str(upload["commit_sha"]), str(upload["ref"]), upload["pull_number"], upload["tool_name"],
                   tuple(upload["tools"]), int(upload["results"]), rest.decode("utf-8"))
