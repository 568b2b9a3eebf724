"""The request side of the one check every resource and admin API route runs: the bearer token or
the session cookie a request offers, and whether a write comes from this server's own origin. Who
that is and what they may do is decided by bot/auth/guard.py."""

from __future__ import annotations

import time
from collections.abc import Callable

from aiohttp import web

from bot.auth.access import Access
from bot.auth.guard import SAFE_METHODS, Denial, Guard, Principal, own_origin, same_origin
from bot.auth.store import AuthStore
from bot.server.signin.cookies import cookies_for
from bot.store.model import ConnectorStore


def bearer_of(request: web.Request) -> str:
    """The `Authorization: Bearer` token a request sent ("" for none)."""
    scheme, _, offered = request.headers.get("Authorization", "").partition(" ")
    return offered.strip() if scheme.lower() == "bearer" else ""


class Gate:
    def __init__(self, *, admin_token: str | None, store: AuthStore | None = None,
                 access: Callable[[], Access] | None = None, public_url: str | None = None,
                 connectors: ConnectorStore | None = None, clock: Callable[[], float] = time.time) -> None:
        self.guard = Guard(admin_token=admin_token, store=store, access=access, connectors=connectors, clock=clock)
        self.public_url = public_url
        self.cookies = cookies_for(public_url)

    @property
    def admin_token(self) -> bytes | None:
        return self.guard.admin_token

    @property
    def access(self) -> Callable[[], Access]:
        return self.guard.access

    async def principal(self, request: web.Request) -> Principal | None:
        return await self.guard.principal(bearer_of(request), request.cookies.get(self.cookies.session),
                                          request.remote)

    async def break_glass_hash(self) -> str | None:
        return await self.guard.break_glass_hash()

    async def end_sessions(self, connector: str) -> int:
        return await self.guard.end_sessions(connector)

    async def check(self, request: web.Request, permission: str, account: str | None = None, *,
                    some_account: bool = False) -> Principal | Denial:
        """The caller, when allowed `permission` on an object of `account` (bot/auth/guard.py
        `Guard.decide`); a write by cookie must come from this server's own pages."""
        principal = await self.principal(request)
        if principal is None and bearer_of(request) and (throttled := self.guard.throttled(request.remote)):
            return throttled
        return self.guard.decide(
            principal, permission, account, some_account=some_account,
            cross_site_write=lambda: request.method not in SAFE_METHODS and not self.same_origin(request))

    def same_origin(self, request: web.Request) -> bool:
        return same_origin(request.headers.get("Origin") or request.headers.get("Referer"), self.own_origin(request))

    def own_origin(self, request: web.Request) -> str:
        return own_origin(self.public_url, request.scheme, request.host)
