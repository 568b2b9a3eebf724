"""`GET /livez` and `GET /readyz`, the probes an orchestrator asks, beside `GET /healthz`.

- `/livez`: the process answers (its event loop turns). It never touches the store, so a
  PostgreSQL outage makes no orchestrator restart every process at once: restarting would not
  bring the database back.
- `/readyz`: the process can do its work now — it has started (its queue runs), the store answers,
  and the database has exactly the schema this release migrates to (an older one means the
  migrations have not run; a newer one, that a newer release took the database over and this
  process must not write to it). A load balancer sends traffic only to ready processes.
- `/healthz` (bot/server/app.py) stays what it was: the store reachable.

Each answer is JSON (`{"status": "ok"|"unavailable", ...}`), 200 or 503, and names no secret.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from bot.server import logging as log

logger = log.get("probes")
PROBE_TIMEOUT = 5.0  # seconds: under a probe's usual timeout, so the answer is ours, not a timeout


@dataclass(frozen=True)
class Readiness:
    """What `/readyz` asks: whether the app has started, a store ping, the schema's version."""

    started: Callable[[], bool]
    ping: Callable[[], Awaitable[None]]
    schema_version: Callable[[], Awaitable[int]]
    latest: int


def readiness_problem(started: bool, version: int | None, latest: int) -> str | None:
    """Why the process is not ready (pure), or None; `version` None when the store did not answer."""
    if not started:
        return "starting"
    if version is None:
        return "the store is unreachable"
    if version < latest:
        return f"the database has schema version {version}; the migrations to {latest} have not run"
    if version > latest:
        return f"the database has schema version {version}, newer than this release's {latest}"
    return None


async def livez(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


def setup_probes(app: web.Application, readiness: Readiness) -> None:
    async def readyz(request: web.Request) -> web.Response:
        version: int | None = None
        if readiness.started():
            try:
                async with asyncio.timeout(PROBE_TIMEOUT):
                    await readiness.ping()
                    version = await readiness.schema_version()
            except Exception as exc:
                logger.error("readiness check failed: the store is unreachable", extra={"error": log.error_text(exc)})
        problem = readiness_problem(readiness.started(), version, readiness.latest)
        if problem is not None:
            return web.json_response({"status": "unavailable", "reason": problem, "schema": version}, status=503)
        return web.json_response({"status": "ok", "store": "ok", "schema": version})

    app.router.add_get("/livez", livez)
    app.router.add_get("/readyz", readyz)
