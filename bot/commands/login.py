"""`reviewer login --server URL [--connector NAME]` and `reviewer logout`: the terminal sign-in.

Login listens on 127.0.0.1 (a free port) at `/callback`, asks the server for the provider's URL
(`POST /v1/webapi/oidc/login/console`, or `saml/` for a SAML connector, with that listener and a fresh 32-byte `secret_key`), opens
it in the browser (or prints it), and waits for the browser to come back with the sealed answer,
which only this process can open. The session token is kept in
`$XDG_CONFIG_HOME/reviewer/session.json` (default `~/.config`; bot/commands/session.py), mode 0600, never printed.

`reviewer login --server URL --mfa` runs an MFA round for the stored session the same way
(`POST /v1/webapi/{oidc,saml}/mfa/console` with the session as a bearer), so that a terminal may
use a permission in `access.mfa.required` for the next five minutes.

Exit codes: 0 signed in (or out), 1 the sign-in failed or timed out, 2 usage (no such server or
connector, several connectors and none chosen).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import webbrowser
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from bot.commands.session import save_session, session_file
from bot.server.login_listener import AnswerRefused, LoginListener

WAIT_SECONDS = 300.0
TIMEOUT = aiohttp.ClientTimeout(total=30)


class LoginError(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


async def login(server: str, connector: str | None, *, open_url: Callable[[str], Any],
                path: Path, wait: float = WAIT_SECONDS) -> dict[str, Any]:
    """Signs in and stores the session; returns what was stored, without the token."""
    server = server.rstrip("/")
    async with aiohttp.ClientSession(timeout=TIMEOUT) as http:
        kind, connector = await _pick_connector(http, server, connector)
        answer = await _round(lambda client: _start(http, server + f"/v1/webapi/{kind}/login/console",
                                                    {"connector_id": connector, "redirect_url": client}),
                              open_url, wait)
    if not isinstance(answer.get("token"), str) or not answer["token"]:
        raise LoginError("the server's answer carries no session token")
    record = {"server": server, "connector": connector, "token": answer["token"],
              "username": answer.get("username"), "roles": answer.get("roles", []), "expires": answer.get("expires")}
    save_session(path, record)
    return {k: v for k, v in record.items() if k != "token"}


async def mfa_round(server: str, *, open_url: Callable[[str], Any], path: Path,
                    wait: float = WAIT_SECONDS) -> str:
    """An MFA round for the session a previous `reviewer login` stored (docs/connectors.md's MFA endpoints,
    terminal form); returns the `mfaVerifiedAt` the server recorded."""
    server = server.rstrip("/")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise LoginError(f"no session in {path}: run `reviewer login --server {server}` first", 2) from None
    if not isinstance(record, dict) or record.get("server") != server or not record.get("token"):
        raise LoginError(f"the session in {path} is not for {server}: run `reviewer login --server {server}` first", 2)
    connector = str(record.get("connector"))
    async with aiohttp.ClientSession(timeout=TIMEOUT) as http:
        kind, _ = await _pick_connector(http, server, connector)
        headers = {"Authorization": f"Bearer {record['token']}"}
        answer = await _round(lambda client: _start(http, server + f"/v1/webapi/{kind}/mfa/console",
                                                    {"connector_id": connector, "redirect_url": client}, headers),
                              open_url, wait)
    verified = answer.get("mfaVerifiedAt")
    if not isinstance(verified, str):
        raise LoginError("the server's answer carries no mfaVerifiedAt")
    return verified


async def _round(begin: Callable[[str], Awaitable[str]], open_url: Callable[[str], Any], wait: float) -> dict[str, Any]:
    """Listens on 127.0.0.1 at /callback (bot/server/login_listener.py), lets `begin` give the
    provider URL for that listener, opens it, and waits for the browser to bring back the sealed
    answer."""
    async with LoginListener(secrets.token_bytes(32)) as listener:
        open_url(await begin(listener.url))
        try:
            return await asyncio.wait_for(listener.answer, wait)
        except TimeoutError:
            raise LoginError(f"no answer from the browser within {wait:.0f} seconds") from None
        except AnswerRefused as refused:
            raise LoginError(str(refused)) from None


async def _pick_connector(http: aiohttp.ClientSession, server: str, chosen: str | None) -> tuple[str, str]:
    """(kind, name) of the connector to use: the one named, else the only one offered."""
    listed = await _json(http, "GET", server + "/v1/webapi/connectors")
    offered = [(str(c.get("kind")), str(c.get("name"))) for c in listed if isinstance(c, dict)
               and c.get("kind") in ("oidc", "saml")] if isinstance(listed, list) else []
    if chosen is not None:
        kinds = [kind for kind, name in offered if name == chosen]
        return (kinds[0] if len(kinds) == 1 else "oidc"), chosen  # unknown: the server says so by name
    names = [name for _, name in offered]
    if len(offered) == 1:
        return offered[0]
    if not names:
        raise LoginError(f"{server} offers no connector to sign in with", 2)
    raise LoginError(f"{server} offers several connectors ({', '.join(map(str, names))}); choose one with "
                     "--connector NAME", 2)


async def _start(http: aiohttp.ClientSession, url: str, body: dict[str, str],
                 headers: dict[str, str] | None = None) -> str:
    answer = await _json(http, "POST", url, json=body, headers=headers or {})
    target = answer.get("redirect_url") if isinstance(answer, dict) else None
    if not isinstance(target, str) or not target.startswith(("https://", "http://")):
        raise LoginError(f"{url} did not answer with a sign-in URL")
    return target


async def _json(http: aiohttp.ClientSession, method: str, url: str, **kwargs: Any) -> Any:
    try:
        async with http.request(method, url, **kwargs) as response:
            text = await response.text()
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise LoginError(f"cannot reach {url} ({exc.__class__.__name__})", 2) from None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if status >= 400:
        error = value.get("error", {}) if isinstance(value, dict) else {}
        message = error.get("message") if isinstance(error, dict) else None
        raise LoginError(f"{url} answered {status}: {message or 'no details'}", 2 if status in (400, 404) else 1)
    return value


def _open_in_browser(url: str) -> None:
    print(f"Open this URL to sign in (a browser is opened if one is available):\n{url}", flush=True)
    webbrowser.open(url)


def _print_only(url: str) -> None:
    print(f"Open this URL to sign in:\n{url}", flush=True)


def run_login(args: argparse.Namespace) -> int:
    opener = _print_only if args.no_browser else _open_in_browser
    if args.mfa:
        try:
            verified = asyncio.run(mfa_round(args.server, open_url=opener, path=session_file()))
        except LoginError as exc:
            print(f"reviewer login: error: {exc}", file=sys.stderr)
            return exc.code
        print(f"MFA check passed at {verified}: permissions in access.mfa.required are open for 5 minutes.")
        return 0
    try:
        stored = asyncio.run(login(args.server, args.connector, open_url=opener, path=session_file()))
    except LoginError as exc:
        print(f"reviewer login: error: {exc}", file=sys.stderr)
        return exc.code
    print(f"Signed in to {stored['server']} as {stored['username']} (roles: {', '.join(stored['roles']) or 'none'}; "
          f"until {stored['expires']}).")
    return 0


def run_logout(args: argparse.Namespace) -> int:
    path = session_file()
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print("Not signed in.")
        return 0
    except (OSError, ValueError) as exc:
        print(f"reviewer logout: error: cannot read {path} ({exc.__class__.__name__})", file=sys.stderr)
        return 1
    try:
        asyncio.run(_logout(record))
    except LoginError as exc:
        print(f"reviewer logout: warning: {exc}; the local session is removed anyway", file=sys.stderr)
    path.unlink(missing_ok=True)
    print(f"Signed out of {record.get('server')}.")
    return 0


async def _logout(record: dict[str, Any]) -> None:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as http:
        await _json(http, "POST", str(record.get("server", "")).rstrip("/") + "/v1/webapi/logout",
                    headers={"Authorization": f"Bearer {record.get('token', '')}"})
