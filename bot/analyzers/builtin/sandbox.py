"""Running a linter on a pull request's files: a temporary copy, a bounded child, no server secrets.

The files are written under a fresh temporary directory (never executed: the tools only read
them); the child starts through a small Python launcher that sets its resource limits and then
replaces itself with the tool (`os.execv`), so that no `preexec_fn` runs in a threaded server:
address space (`memory`), CPU seconds, the size of any file it writes, no core dump. It runs in
a session of its own, killed as a group when the wall-clock `timeout` passes, with an
environment of its own (no variable of the server's, HOME and XDG_CONFIG_HOME in the temporary
directory so that no user-level tool configuration of the server is read).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_OUTPUT_BYTES = 32 * 1024 * 1024
MAX_WRITE_BYTES = 64 * 1024 * 1024
_BOOT = (
    "import os, resource, sys\n"
    "memory, cpu, fsize = (int(v) for v in sys.argv[1:4])\n"
    "for which, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, cpu),\n"
    "                     (resource.RLIMIT_FSIZE, fsize), (resource.RLIMIT_CORE, 0)):\n"
    "    resource.setrlimit(which, (value, value))\n"
    "os.execv(sys.argv[4], sys.argv[4:])\n"
)


@dataclass(frozen=True)
class Bounds:
    timeout: float = 60.0  # wall-clock seconds
    memory_bytes: int = 1024 * 1024 * 1024

    @property
    def cpu_seconds(self) -> int:
        return int(self.timeout) + 5  # a backstop; the wall clock usually acts first


@dataclass(frozen=True)
class Completed:
    returncode: int | None  # None: killed at the timeout
    stdout: bytes
    stderr: bytes
    seconds: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


class StageError(ValueError):
    """A path that cannot be written under the temporary directory."""


def stage(root: Path, files: Mapping[str, bytes]) -> list[str]:
    """Writes each file at its repository path under `root`; returns the paths written."""
    written = []
    for path, content in files.items():
        parts = path.split("/")
        if path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts) or "\x00" in path:
            raise StageError(f"{path[:200]!r} is not a relative path inside the repository")
        target = root.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(path)
    return written


def child_environment(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_COLOR": "1"}


async def run_bounded(argv: Sequence[str], cwd: Path, bounds: Bounds, env: Mapping[str, str]) -> Completed:
    """Runs argv (argv[0] an absolute path) in cwd within the bounds; never raises for the child's
    failure (OSError when it cannot start)."""
    launcher = [sys.executable, "-I", "-S", "-c", _BOOT, str(bounds.memory_bytes), str(bounds.cpu_seconds),
                str(MAX_WRITE_BYTES), *argv]
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *launcher, cwd=cwd, env=dict(env), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True, limit=MAX_OUTPUT_BYTES)
    try:
        out, err = await asyncio.wait_for(_read(proc), bounds.timeout)
    except TimeoutError:
        _kill(proc)
        await proc.wait()
        return Completed(None, b"", b"", time.monotonic() - started)
    except BaseException:
        _kill(proc)
        await proc.wait()
        raise
    return Completed(proc.returncode, out, err, time.monotonic() - started)


async def _read(proc: asyncio.subprocess.Process) -> tuple[bytes, bytes]:
    """Both streams, each cut at MAX_OUTPUT_BYTES (the rest is read and thrown away)."""
    assert proc.stdout is not None and proc.stderr is not None

    async def drain(stream: asyncio.StreamReader) -> bytes:
        kept = bytearray()
        while chunk := await stream.read(1024 * 1024):
            if len(kept) < MAX_OUTPUT_BYTES:
                kept += chunk[: MAX_OUTPUT_BYTES - len(kept)]
        return bytes(kept)

    out, err = await asyncio.gather(drain(proc.stdout), drain(proc.stderr))
    await proc.wait()
    return out, err


def _kill(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
