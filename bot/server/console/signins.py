"""`/console/signins`: recent sign-ins and refusals, each refusal with the check that failed and
the names (never the values) of the claims the provider sent. Refusals of requests that showed no
sign-in under way (bot/auth/signin_log.py) are listed apart (`?outcome=unauthenticated`)."""

from __future__ import annotations

from aiohttp import web

from bot.server.console.access import Refused, viewer
from bot.server.console.context import Console
from bot.server.console.render import page

SHOWN = 200


class SigninPages:
    def __init__(self, console: Console) -> None:
        self.console = console

    async def listing(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, "connectors:read")
        except Refused as refused:
            return refused.response
        only = request.query.get("outcome", "")
        entries = await self.console.signins.signins(SHOWN, unauthenticated=only == "unauthenticated")
        if only in ("ok", "failed"):
            entries = [e for e in entries if e.get("ok") is (only == "ok")]
        return page("signins.html", who=who, entries=entries, only=only)
