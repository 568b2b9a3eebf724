"""A terminal's sign-in and MFA round (`reviewer login`), either kind: a JSON request naming the
connector and the terminal's listener, checked as Teleport checks it before any provider is
contacted; the answer is the URL to open in a browser (JSON errors name the failed check)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.auth.errors import SignInError
from bot.auth.pending import PendingSignIn, Terminal
from bot.auth.redirects import RedirectError, check_client_redirect
from bot.auth.sessions import find_session, mfa_session, token_key
from bot.auth.store import AuthStore
from bot.documents.bounded_read import read_at_most
from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.server.signin.gate import bearer_of

MAX_BODY = 16 * 1024
SettingsOf = Callable[[Any], Awaitable[Any]]  # a connector's settings by name, either kind
Start = Callable[[Any, PendingSignIn], Awaitable[str]]  # starts the flow: the provider's URL


def json_error(status: int, check: str, message: str) -> web.Response:
    return web.json_response({"error": {"check": check, "message": message}}, status=status,
                             headers={"Cache-Control": "no-store"})


async def console_login(request: web.Request, settings_of: SettingsOf, start: Start) -> web.Response:
    """A terminal's sign-in: the client's listener checked, then the provider's URL."""
    body = await json_body(request)
    if body is None:
        return json_error(400, "request", 'the body must be a JSON object {"connector_id", "redirect_url"}')
    try:
        connector = await settings_of(body.get("connector_id"))
        client = check_client_redirect(body.get("redirect_url") or "",
                                       allowed_https_hostnames=connector.allowed_https_hostnames,
                                       insecure_allowed_cidr_ranges=connector.insecure_allowed_cidr_ranges)
        url = await start(connector, PendingSignIn(connector.name, "console",
                                                   client=Terminal(client.url, client.secret_key.hex())))
    except RedirectError as exc:
        return json_error(400, "redirect-url", str(exc))
    except SignInError as exc:
        return json_error(exc.status, exc.check, exc.message)
    return web.json_response({"redirect_url": url}, headers={"Cache-Control": "no-store"})


async def mfa_console(store: AuthStore, request: web.Request, settings_of: SettingsOf, start: Start) -> web.Response:
    """A terminal's MFA round: the bearer session's user, through the connector it signed in with,
    back to the terminal's checked listener."""
    token = bearer_of(request)
    session = await find_session(store, token) if token else None
    body = await json_body(request)
    if body is None:
        return json_error(400, "request", 'the body must be a JSON object {"connector_id", "redirect_url"}')
    try:
        session = mfa_session(session, body.get("connector_id"), "send the session as `Authorization: Bearer <token>`")
        connector = await settings_of(session.connector)
        client = check_client_redirect(body.get("redirect_url") or "",
                                       allowed_https_hostnames=connector.allowed_https_hostnames,
                                       insecure_allowed_cidr_ranges=connector.insecure_allowed_cidr_ranges)
        url = await start(connector, PendingSignIn(connector.name, "mfa",
                                                   client=Terminal(client.url, client.secret_key.hex()),
                                                   session=token_key(token), username=session.username))
    except RedirectError as exc:
        return json_error(400, "redirect-url", str(exc))
    except SignInError as exc:
        return json_error(exc.status, exc.check, exc.message)
    return web.json_response({"redirect_url": url}, headers={"Cache-Control": "no-store"})


async def json_body(request: web.Request) -> dict[str, Any] | None:
    if request.content_length is not None and request.content_length > MAX_BODY:
        return None
    raw = await read_at_most(request.content, MAX_BODY)
    if len(raw) > MAX_BODY:
        return None
    try:
        value = parse_json(raw)  # bounded nesting, and a lone surrogate is refused, not passed on
    except JsonBodyError:
        return None
    return value if isinstance(value, dict) else None
