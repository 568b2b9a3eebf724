"""`/console/login`: identifier-first sign-in through a connector, or the break-glass token.

Typing a username lists the ready connectors (OIDC and SAML) whose `user_matchers` match it; when exactly
one connector with matchers matches, the browser goes straight to it (through the sign-in route,
which takes it to the provider and back to `next`). With no matching matchers, the connectors
without matchers (they match everyone) are listed. The break-glass token (`REVIEWER_ADMIN_TOKEN`)
opens a console session with every permission, for first set-up; it is compared in constant
time, and the form must come from this server's own pages. Each attempt with it, let in or refused,
is in the sign-in log (`/console/signins`: user "break-glass token", flow `console`) with the
address it came from, and in the logs.
"""

from __future__ import annotations

import hmac
import logging
import time
from typing import Any
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from bot.audit.log import BREAK_GLASS_ACTOR
from bot.auth.connectors import display_of, is_ready, user_matches
from bot.auth.guard import BREAK_GLASS
from bot.auth.redirects import DEFAULT_RETURN, RedirectError, web_return_path
from bot.auth.sessions import Session, create_session, token_bytes, token_key
from bot.connectors.kinds import OIDC, SAML
from bot.server.console.access import Refused, check_form, denied_page, viewer
from bot.server.console.context import Console
from bot.server.console.render import page, see_other

MAX_USERNAME = 256
log = logging.getLogger("reviewer.signin")


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a path on this server under /console/, else the overview."""
    try:
        path = web_return_path(value)
    except RedirectError:
        return DEFAULT_RETURN
    return path if path.startswith("/console/") else DEFAULT_RETURN


class LoginPages:
    def __init__(self, console: Console) -> None:
        self.console = console

    async def _connectors(self) -> list[dict[str, Any]]:
        docs: list[dict[str, Any]] = []
        for kind in (OIDC, SAML):
            items, _ = await self.console.connectors.list(kind.kind)
            docs += [doc for doc in items if is_ready(doc)]
        return docs

    async def login(self, request: web.Request) -> web.Response:
        target = safe_next(request.query.get("next"))
        username = request.query.get("username", "").strip()[:MAX_USERNAME]
        docs = await self._connectors()
        if username:
            with_matchers = [d for d in docs if (d.get("spec") or {}).get("user_matchers") and user_matches(d, username)]
            if len(with_matchers) == 1:
                return see_other(_start_url(with_matchers[0], target))
            docs = with_matchers or [d for d in docs if not (d.get("spec") or {}).get("user_matchers")]
        choices = [{"name": d["metadata"]["name"], "display": display_of(d), "url": _start_url(d, target)}
                   for d in docs]
        origins = {_origin((d.get("spec") or {}).get("issuer_url", "")) for d in docs} - {""}
        return page("login.html", next=target, username=username, choices=choices, who=None,
                    error=request.query.get("error", "") == "token", form_origins=origins,
                    token_enabled=self.console.gate.admin_token is not None)

    async def token(self, request: web.Request) -> web.Response:
        if not self.console.gate.same_origin(request):
            return denied_page(request, 403, "the sign-in form must come from this server's own pages")
        form = await request.post()
        target = safe_next(form.get("next") if isinstance(form.get("next"), str) else None)  # type: ignore[arg-type]
        offered = form.get("token")
        expected = self.console.gate.admin_token
        throttle = self.console.gate.guard.throttle
        if (wait := throttle.wait(request.remote)) is not None:  # not compared: a guess learns nothing
            response = denied_page(request, 429, f"Too many wrong tokens from your address: try again in {wait} s.")
            response.headers["Retry-After"] = str(wait)
            return response
        if not expected or not isinstance(offered, str) or not hmac.compare_digest(token_bytes(offered), expected):
            throttle.failed(request.remote)
            await self._record(request, ok=False)
            return see_other("/console/login?" + urlencode({"next": target, "error": "token"}))
        await self._record(request, ok=True)
        if self.console.audit is not None:
            await self.console.audit.record(BREAK_GLASS_ACTOR, "signin.break-glass", "console session",
                                            ip=request.remote, details={"flow": "console"})
        now = time.time()
        session = Session("admin-token", BREAK_GLASS, [], now, now + self.console.session_ttl,
                          break_glass_hash=await self.console.gate.break_glass_hash())
        session_token = await create_session(self.console.signins, session)
        response = see_other(target)
        cookies = self.console.gate.cookies
        cookies.set(response, cookies.session, session_token, self.console.session_ttl)
        return response

    async def _record(self, request: web.Request, *, ok: bool) -> None:
        """A sign-in with the break-glass token, in the sign-in log and the logs (never the token)."""
        entry = {"at": time.time(), "connector": BREAK_GLASS, "kind": "token", "flow": "console",
                 "username": BREAK_GLASS_ACTOR, "ok": ok, "roles": ["*"] if ok else [],
                 "check": None if ok else "token",
                 "message": None if ok else "the token given is not the server's REVIEWER_ADMIN_TOKEN",
                 "claims": [], "warnings": [], "ip": request.remote}
        await self.console.signins.record_signin(entry)
        fields = {"username": BREAK_GLASS_ACTOR, "connector": BREAK_GLASS, "flow": "console", "ip": request.remote}
        if ok:
            log.info("signed in: connector=%s username=%s roles=*", BREAK_GLASS, BREAK_GLASS_ACTOR, extra=fields)
        else:
            log.warning("sign-in refused: connector=%s check=token username=%s", BREAK_GLASS, BREAK_GLASS_ACTOR,
                        extra=fields)

    async def logout(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, None)
            await check_form(request, who)
        except Refused as refused:
            return refused.response
        cookies = self.console.gate.cookies
        await self.console.signins.delete_session(token_key(request.cookies.get(cookies.session, "")))
        response = see_other("/console/login")
        cookies.clear(response, cookies.session)
        return response


def _start_url(doc: dict[str, Any], target: str) -> str:
    """The sign-in route of the connector's kind, which takes the browser to its provider and back."""
    route = "/v1/webapi/saml/sso?" if doc.get("kind") == SAML.kind else "/v1/webapi/oidc/login/web?"
    return route + urlencode({"connector_id": doc["metadata"]["name"], "redirect_url": target})


def _origin(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""
