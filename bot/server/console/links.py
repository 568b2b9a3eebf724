"""One-time sign-in links to the console (docs/operations.md "One-time sign-in links"), what
`make demo` prints as `Console: URL`.

    POST /v1/signin-links                  the break-glass token only → 201 {"url", "expiresAt"}
    GET  /console/login/link?token=TOKEN   taken once, before it expires → a console session, then `next`

A link is no way in of its own: only a caller holding the break-glass `REVIEWER_ADMIN_TOKEN`
itself (as a bearer: not a session, whatever its roles, not a cookie) may ask for one, and what
it opens is the console session that token opens at `/console/login` — so it gives nothing the
token does not already give, to no one who does not hold it. It exists so that a script holding
the token (the demo's driver) can hand a browser a session without the token passing through the
browser. Everything else is there to keep a link from being more than that:

- single use: it is kept as a pending sign-in under the SHA-256 of its token (the token itself is
  stored nowhere) and taken by the database in one statement, so of two requests, or two web
  processes, only one gets in;
- short-lived: `expiresIn` seconds, 300 by default, at most 900;
- bound to the token it was made with: rotating or unsetting REVIEWER_ADMIN_TOKEN voids links not
  yet used, and ends the sessions they opened, as it ends the token's own console sessions;
- only GET takes it (a HEAD, as link previews send, does not), it answers `no-store` with no
  referrer, the access log drops the query, and every use and refusal is in the sign-in log.

There is no setting that makes links without the token, and none that trusts loopback: a server
behind a reverse proxy on the same machine sees every request come from 127.0.0.1.
"""

from __future__ import annotations

import secrets
import time
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from bot.audit.log import BREAK_GLASS_ACTOR
from bot.auth.guard import BREAK_GLASS, Denial
from bot.auth.sessions import Session, create_session, rfc3339, token_key
from bot.documents.bounded_read import read_at_most
from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.server import logging as log
from bot.server.console.access import denied_page
from bot.server.console.context import Console
from bot.server.console.login import safe_next
from bot.server.console.render import see_other
from bot.server.resources.status import denial_response, status_response

PATH = "/console/login/link"
PENDING = "signin-link:"  # the pending sign-in's key: this, then the SHA-256 of the link's token
DEFAULT_SECONDS, MAX_SECONDS = 300, 900
MAX_BODY = 4096
MAX_TOKEN = 256
ACTION = "signin-link.create"
logger = log.get("signin")


class SignInLinks:
    def __init__(self, console: Console) -> None:
        self.console = console

    async def create(self, request: web.Request) -> web.Response:
        gate = self.console.gate
        principal = await gate.principal(request)
        if principal is None:
            return denial_response(Denial(401, "Unauthorized", "Unauthorized: send `Authorization: Bearer <token>` "
                                                               "with the server's REVIEWER_ADMIN_TOKEN"))
        if principal.session is not None:
            return denial_response(Denial(403, "Forbidden", "only the break-glass REVIEWER_ADMIN_TOKEN itself may ask "
                                                            "for a sign-in link: a session may not, whatever its roles"))
        asked = await _asked(request)
        if isinstance(asked, web.Response):
            return asked
        target, seconds = asked
        token, now = secrets.token_urlsafe(32), time.time()
        expires = now + seconds
        bound = await gate.break_glass_hash()
        await self.console.signins.put_pending(PENDING + token_key(token), {"next": target, "break_glass_hash": bound},
                                               expires)
        if self.console.audit is not None:
            await self.console.audit.record(principal, ACTION, "console", ip=request.remote,
                                            details={"expiresIn": seconds, "next": target})
        url = gate.own_origin(request) + PATH + "?" + urlencode({"token": token})
        return web.json_response({"url": url, "expiresAt": rfc3339(expires)}, status=201,
                                 headers={"Cache-Control": "no-store"})

    async def redeem(self, request: web.Request) -> web.Response:
        token = request.query.get("token", "")
        pending = None
        if 0 < len(token) <= MAX_TOKEN:
            pending = await self.console.signins.take_pending(PENDING + token_key(token))
        current = await self.console.gate.break_glass_hash()
        if pending is None or current is None or pending.get("break_glass_hash") != current:
            await self._record(request, ok=False)
            return _without_referrer(denied_page(request, 403, "This sign-in link was used already, has expired, or "
                                                               "was never issued: ask for a new one, or sign in."))
        now = time.time()
        session = Session("admin-token", BREAK_GLASS, [], now, now + self.console.session_ttl, break_glass_hash=current)
        session_token = await create_session(self.console.signins, session)
        await self._record(request, ok=True)
        if self.console.audit is not None:  # a break-glass console session, as the token form's
            await self.console.audit.record(BREAK_GLASS_ACTOR, "signin.break-glass", "console session",
                                            ip=request.remote, details={"flow": "console-link"})
        response = _without_referrer(see_other(safe_next(pending.get("next"))))
        cookies = self.console.gate.cookies
        cookies.set(response, cookies.session, session_token, self.console.session_ttl)
        return response

    async def _record(self, request: web.Request, *, ok: bool) -> None:
        """A use of a link, let in or refused, in the sign-in log and the logs (never the token)."""
        entry = {"at": time.time(), "connector": BREAK_GLASS, "kind": "link", "flow": "console-link",
                 "username": BREAK_GLASS_ACTOR, "ok": ok, "roles": ["*"] if ok else [],
                 "check": None if ok else "link",
                 "message": None if ok else "the sign-in link was used already, has expired, or was never issued",
                 "claims": [], "warnings": [], "ip": request.remote}
        if not ok:  # a link that matched nothing: anyone can send those, kept apart (bot/auth/signin_log.py)
            entry["unauthenticated"] = True
        await self.console.signins.record_signin(entry)
        fields = {"username": BREAK_GLASS_ACTOR, "connector": BREAK_GLASS, "flow": "console-link", "ip": request.remote}
        if ok:
            logger.info("signed in with a one-time link", extra=fields)
        else:
            logger.warning("sign-in refused: the one-time link was used, expired or unknown", extra=fields)


async def _asked(request: web.Request) -> tuple[str, int] | web.Response:
    """`next` and `expiresIn` from the body (JSON, optional)."""
    raw = await read_at_most(request.content, MAX_BODY)
    if len(raw) > MAX_BODY:
        return status_response(413, f"the body is larger than {MAX_BODY} bytes")
    body: Any = {}
    if raw.strip():
        try:
            body = parse_json(raw)
        except JsonBodyError as error:
            return status_response(400, error.message)
    if not isinstance(body, dict):
        return status_response(422, "the body is invalid", causes=[
            {"field": "", "reason": "type", "message": "the body must be an object: {\"next\", \"expiresIn\"}"}])
    problems = [{"field": f"/{key}", "reason": "unknown-property", "message": f"unknown property {key!r}"}
                for key in body if key not in ("next", "expiresIn")]
    target = body.get("next", "/console/")
    if not isinstance(target, str) or safe_next(target) != target:
        problems.append({"field": "/next", "reason": "value", "message": "`next` is a path under /console/"})
    seconds = body.get("expiresIn", DEFAULT_SECONDS)
    if not isinstance(seconds, int) or isinstance(seconds, bool) or not 1 <= seconds <= MAX_SECONDS:
        problems.append({"field": "/expiresIn", "reason": "range",
                         "message": f"`expiresIn` is a whole number of seconds from 1 to {MAX_SECONDS}"})
    if problems:
        return status_response(422, "the body is invalid", causes=problems)
    return target, seconds


def _without_referrer(response: web.Response) -> web.Response:
    """The link's page sends no Referer onwards: its query is the token."""
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def setup_signin_links(app: web.Application, console: Console) -> None:
    links = SignInLinks(console)
    app.router.add_post("/v1/signin-links", links.create)
    app.router.add_get(PATH, links.redeem, allow_head=False)
