"""`/console/sessions`: the viewer's own sessions, each of which the viewer may end; an
administrator — who may change connectors (`connectors:write`), and so who may sign in — sees
every session and may end any (with the MFA round the admin file asks for connectors:write).

A session is named by its key in the sign-in store: the SHA-256 of its token (bot/auth/sessions.py),
which is not a usable token, so a page that shows it gives nobody a way in. Ending one deletes it,
as signing out does: the next request with its cookie or bearer is signed out. The form carries
the console's CSRF token (bot/server/console/access.py) and the gate's Origin check applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.auth.sessions import token_key
from bot.server.console.access import Refused, Viewer, check_form, denied_page, viewer
from bot.server.console.context import Console
from bot.server.console.render import page, see_other

ADMIN = "connectors:write"
SHOWN = 500
_KEY = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Shown:
    key: str
    username: str
    connector: str
    roles: list[str]
    created: float
    expires: float
    current: bool  # the session this page was asked with
    own: bool


def owned_by(who: Viewer, body: dict[str, Any]) -> bool:
    """A session of the viewer: the same user signed in through the same connector."""
    session = who.principal.session
    return session is not None and body.get("username") == session.username \
        and body.get("connector") == session.connector


def may_end(who: Viewer, body: dict[str, Any]) -> bool:
    return owned_by(who, body) or who.may(ADMIN)


class SessionPages:
    def __init__(self, console: Console) -> None:
        self.console = console

    def _current(self, request: web.Request) -> str:
        return token_key(request.cookies.get(self.console.gate.cookies.session, ""))

    async def listing(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, None)
        except Refused as refused:
            return refused.response
        current = self._current(request)
        rows = [Shown(key, str(body.get("username", "")), str(body.get("connector", "")),
                      list(body.get("roles") or []), float(body.get("created", 0)), float(body.get("expires", 0)),
                      key == current, owned_by(who, body))
                for key, body in await self.console.signins.sessions(SHOWN) if owned_by(who, body) or who.may(ADMIN)]
        return page("sessions.html", who=who, rows=rows, admin=who.may(ADMIN),
                    ended=request.query.get("ended") == "1")

    async def end(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, None)
            form = await check_form(request, who)
        except Refused as refused:
            return refused.response
        key = form.get("session")
        if not isinstance(key, str) or not _KEY.match(key):
            return denied_page(request, 400, "session: name a session by the key this page shows")
        body = await self.console.signins.get_session(key)
        if body is None:
            return page("missing.html", 404, who=who, what="session (it has ended already)")
        if not may_end(who, body):
            return denied_page(request, 403, f"only an administrator ({ADMIN}) may end another user's session")
        if not owned_by(who, body):
            try:  # the gate's whole check of the permission that allows it: an MFA round it asks for too
                await viewer(request, self.console.gate, ADMIN)
            except Refused as refused:
                return refused.response
        await self.console.signins.delete_session(key)
        if not owned_by(who, body) and self.console.audit is not None:  # an administrator's act on another user
            await self.console.audit.record(who.principal, "session.end", f"sessions/{key[:16]}", ip=request.remote,
                                            details={"username": str(body.get("username", ""))[:256],
                                                     "connector": str(body.get("connector", ""))[:253]})
        if key == self._current(request):
            return see_other("/console/login")
        return see_other("/console/sessions?ended=1")
