"""Rendering repository templates in a child process with CPU, memory and wall-clock limits.

The parent sends every render job of one review as JSON on stdin and reads the results as JSON on
stdout: one process per review, not per comment. A child that overruns any limit is killed, and
its jobs count as failed (the engine then falls back to the built-in templates). The child imports
Jinja2 and the template module only, so it starts in a fraction of a second.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bot.engine.templates import Rendered, RenderJob, render_jobs

MEMORY_LIMIT = 256 * 1024 * 1024  # address space, bytes; a render needs about 30 MiB
CPU_SECONDS = 10  # a backstop; the parent's wall-clock timeout is the limit that usually acts
MAX_OUTPUT_BYTES = 16 * 1024 * 1024
# Isolated mode (-I) and an empty environment: the child runs untrusted templates, so it gets no
# secrets from the server's environment and no path but the one holding this package.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from bot.engine.template_worker import main; main()"
WORKER_ARGS = (sys.executable, "-I", "-c", _BOOT, _PACKAGE_ROOT)


def _limit_self() -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the wall-clock timeout still applies
        return
    for which, value in ((resource.RLIMIT_AS, MEMORY_LIMIT), (resource.RLIMIT_CPU, CPU_SECONDS)):
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


def main() -> None:
    _limit_self()
    request = json.load(sys.stdin)
    jobs = [RenderJob(j["source"], j["variables"], j["limit"]) for j in request["jobs"]]
    results = render_jobs(jobs)
    json.dump({"results": [{"text": r.text, "error": r.error} for r in results]}, sys.stdout)


async def render_isolated(jobs: Sequence[RenderJob], timeout: float) -> list[Rendered]:
    """Render in a child process; on any failure of the child, every job fails with the reason."""
    if not jobs:
        return []
    payload = json.dumps(
        {"jobs": [{"source": j.source, "variables": j.variables, "limit": j.limit} for j in jobs]}
    ).encode("utf-8")
    try:
        proc = await asyncio.create_subprocess_exec(
            *WORKER_ARGS,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={},
            limit=MAX_OUTPUT_BYTES,
        )
    except OSError as exc:
        return [Rendered(None, f"the template renderer could not start ({exc.strerror})")] * len(jobs)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(payload), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return [Rendered(None, f"rendering took longer than {timeout:g} s")] * len(jobs)
    try:
        results = json.loads(out)["results"]
        if proc.returncode != 0 or len(results) != len(jobs):
            raise ValueError
    except (ValueError, KeyError, TypeError):
        reason = "the template renderer stopped (a memory or CPU limit, or a crash)"
        return [Rendered(None, reason)] * len(jobs)
    return [Rendered(r.get("text"), r.get("error")) for r in results]


if __name__ == "__main__":
    main()
