"""Talking to a Reviewer server's API from a command: which server, which token, one request.

The server is `--server`, else `REVIEWER_SERVER`, else the one `reviewer login` signed in to. The
token is `REVIEWER_TOKEN` when set, else the session `reviewer login` keeps
(`$XDG_CONFIG_HOME/reviewer/session.json`). A session token goes only to the server that issued it:
`--server` naming another one is refused rather than sending it there, and redirects are never
followed (a redirect to another host would carry the token along). The server's `Status` errors
come back as `ApiError` with their message and causes, for the command to print.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from bot.commands.session import session_file

TIMEOUT = aiohttp.ClientTimeout(total=60)


class ApiError(Exception):
    """A request that did not succeed: `code` is the command's exit code (1 refused, 2 usage or unreachable)."""

    def __init__(self, message: str, code: int = 1, causes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.causes = causes


@dataclass(frozen=True)
class Credentials:
    server: str  # no trailing slash
    token: str

    def __repr__(self) -> str:  # never print the token
        return f"Credentials(server={self.server!r}, token=<redacted>)"


def credentials(server: str | None, environ: Mapping[str, str] | None = None) -> Credentials:
    """The server (`--server`, else REVIEWER_SERVER, else the session's) and the token to send it."""
    env = os.environ if environ is None else environ
    server = server or env.get("REVIEWER_SERVER") or None
    wanted = server.rstrip("/") if server else None
    if wanted is not None and not wanted.startswith(("https://", "http://")):
        raise ApiError(f"--server must be an http:// or https:// URL; got {wanted!r}", 2)
    path = session_file(dict(env))
    record = _session(path)
    token = env.get("REVIEWER_TOKEN")
    if token:
        where = wanted or (record or {}).get("server")
        if not where:
            raise ApiError("no server: pass --server URL or set REVIEWER_SERVER (REVIEWER_TOKEN is set, and no "
                           "`reviewer login` session names one)", 2)
        return Credentials(str(where), token)
    if record is None:
        raise ApiError("not signed in: run `reviewer login --server URL`, or set REVIEWER_TOKEN", 2)
    if wanted is not None and wanted != record["server"]:
        raise ApiError(f"the session in {path} is for {record['server']}, not {wanted}: sign in there with "
                       f"`reviewer login --server {wanted}`, or set REVIEWER_TOKEN", 2)
    return Credentials(record["server"], record["token"])


def _session(path: Any) -> dict[str, str] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("server"), str) or not record.get("token"):
        return None
    return {"server": record["server"].rstrip("/"), "token": str(record["token"])}


async def call(http: aiohttp.ClientSession, creds: Credentials, method: str, path: str, *,
               body: Any = None, query: Mapping[str, str] | None = None) -> Any:
    """The JSON of a successful answer; ApiError otherwise."""
    url = creds.server + path
    headers = {"Authorization": f"Bearer {creds.token}", "Accept": "application/json"}
    try:
        async with http.request(method, url, json=body, params=query or None, headers=headers,
                                allow_redirects=False) as response:
            text = await response.text()
            status, location = response.status, response.headers.get("Location", "")
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise ApiError(f"cannot reach {creds.server} ({exc.__class__.__name__})", 2) from None
    try:
        value = json.loads(text) if text else None
    except ValueError:
        value = None
    if 300 <= status < 400:
        raise ApiError(f"{method} {path} answered {status}, a redirect to {location or 'nowhere'}; not followed, "
                       "so that the token stays with the server: pass the server's own address with --server", 2)
    if status >= 400:
        raise _refusal(method, path, status, value)
    return value


def _refusal(method: str, path: str, status: int, value: Any) -> ApiError:
    """The server's `Status` object, in words."""
    status_object = value if isinstance(value, dict) else {}
    message = status_object.get("message")
    reason = status_object.get("reason")
    details = status_object.get("details")
    causes = details.get("causes") if isinstance(details, dict) else None
    lines = tuple(f"{c.get('field') or '(the body)'}: {c.get('reason', '')}: {c.get('message', '')}"
                  for c in (causes if isinstance(causes, list) else []) if isinstance(c, dict))
    said = f"{reason}: {message}" if isinstance(reason, str) and isinstance(message, str) else "no details"
    return ApiError(f"{method} {path} answered {status} ({said})", 2 if status == 400 else 1, lines)
