"""The optional access log (`REVIEWER_ACCESS_LOG=1`): one JSON line per HTTP request answered, on the
logger `reviewer.access`, whatever `REVIEWER_LOG_LEVEL` is.

A line holds the method, the path without its query (a query can carry a sign-in's `code` or
`state`), the status, the duration in milliseconds, the client's address as the server sees it
(`request.remote`, the one the audit log records) and the user agent (cut at 200 characters):
never a header's value otherwise, a cookie, a token or a body. The logs' own redactor
(bot/secrets/redaction.py) scrubs every line besides.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from bot.server import logging as log

logger = log.get("access")
MAX_AGENT = 200
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def enable_access_log(app: web.Application) -> None:
    """Logs every request `app` answers; call before any other middleware is added (it is then
    the outermost, and sees the status every other one settled on)."""
    logger.setLevel(logging.INFO)  # its own level: REVIEWER_LOG_LEVEL=WARNING keeps the access log
    app.middlewares.insert(0, _access_log)


def access_fields(request: web.Request, status: int, seconds: float) -> dict[str, object]:
    """What a line says of one request (pure: nothing but these fields is ever logged)."""
    return {"method": request.method, "path": request.path, "status": status,
            "duration_ms": round(seconds * 1000, 1), "ip": request.remote,
            "agent": request.headers.get("User-Agent", "")[:MAX_AGENT]}


@web.middleware
async def _access_log(request: web.Request, handler: Handler) -> web.StreamResponse:
    start = time.perf_counter()
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    except asyncio.CancelledError:
        status = 499  # the client went away before the answer (nginx's number for it)
        raise
    finally:
        logger.info("%s %s %s", request.method, request.path, status,
                    extra=access_fields(request, status, time.perf_counter() - start))
