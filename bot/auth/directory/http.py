"""The HTTP both directory group lookups (Microsoft Graph, Google's Directory API) speak: a bounded,
redirect-free JSON request, and the OAuth token answer read the same way. Each lookup keeps its
own messages; `failed` turns a reason into its sign-in refusal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aiohttp

from bot.auth.errors import SignInError
from bot.auth.redirects import origin_of
from bot.documents.bounded_read import read_at_most
from bot.documents.jsonbody import parse_json

MAX_BODY = 4 * 1024 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=20)


async def request_json(http: aiohttp.ClientSession, method: str, url: str, failed: Callable[[str], SignInError],
                       **kwargs: Any) -> tuple[int, Any]:
    """(status, JSON body or None when it is not JSON or too large); unreachable → `failed`."""
    try:
        async with http.request(method, url, timeout=TIMEOUT, allow_redirects=False, **kwargs) as response:
            raw = await read_at_most(response.content, MAX_BODY)
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise failed(f"{origin_of(url)} could not be reached ({exc.__class__.__name__})") from None
    if len(raw) > MAX_BODY:
        return status, None
    try:
        return status, parse_json(raw)
    except ValueError:
        return status, None


def access_token(status: int, body: Any) -> tuple[str | None, str]:
    """An OAuth token answer's `access_token`, or None and what went wrong (its `error`, else the status)."""
    token = body.get("access_token") if isinstance(body, dict) else None
    if status == 200 and isinstance(token, str):
        return token, ""
    return None, str(body.get("error"))[:80] if isinstance(body, dict) and body.get("error") else f"HTTP {status}"
