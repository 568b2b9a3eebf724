"""Who is calling, and may they: the one check every resource and admin API route runs.

A caller is the break-glass `REVIEWER_ADMIN_TOKEN` (every permission, no MFA), a session token
sent as `Authorization: Bearer` (the terminal), or the session cookie (the browser). A state-
changing request authenticated by the cookie must come from this server's own origin (`Origin`,
else `Referer`), so another site cannot make a signed-in browser write (CSRF). What a session may
do is read per request from the admin file's `access` (a reload applies at once).
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

from bot.auth.access import EVERYTHING, Access, Grant, grant_for, needs_mfa
from bot.auth.sessions import SESSION_COOKIE, Session, find_session
from bot.auth.store import AuthStore

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# The connector of a console session opened with the break-glass token: it has every permission,
# as the token has. Parentheses cannot appear in a connector's name, so no sign-in can claim it.
BREAK_GLASS = "(break-glass token)"


@dataclass(frozen=True)
class Principal:
    username: str
    roles: tuple[str, ...]
    grant: Grant
    session: Session | None  # None: the break-glass token
    by_cookie: bool = False


@dataclass(frozen=True)
class Denial:
    status: int  # 401 or 403
    reason: str  # Unauthorized, Forbidden, MFARequired
    message: str


class Gate:
    def __init__(self, *, admin_token: str | None, store: AuthStore | None = None,
                 access: Callable[[], Access] | None = None, public_url: str | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.admin_token = admin_token.encode() if admin_token else None
        self.store = store
        self.access = access or (lambda: Access({}))
        self.public_url = public_url
        self.clock = clock

    async def principal(self, request: web.Request) -> Principal | None:
        scheme, _, offered = request.headers.get("Authorization", "").partition(" ")
        offered = offered.strip()
        if scheme.lower() == "bearer" and offered:
            if self.admin_token and hmac.compare_digest(offered.encode(), self.admin_token):
                return Principal("admin-token", (), EVERYTHING, None)
            return await self._from_session(offered, by_cookie=False)
        cookie = request.cookies.get(SESSION_COOKIE)
        return await self._from_session(cookie, by_cookie=True) if cookie else None

    async def _from_session(self, token: str, *, by_cookie: bool) -> Principal | None:
        if self.store is None:
            return None
        session = await find_session(self.store, token)
        if session is None:
            return None
        grant = EVERYTHING if session.connector == BREAK_GLASS else grant_for(self.access(), session.roles)
        return Principal(session.username, tuple(session.roles), grant, session, by_cookie)

    async def check(self, request: web.Request, permission: str,
                    account: str | None = None) -> Principal | Denial:
        """The caller, when allowed `permission` (on `account`, when the route is about one)."""
        principal = await self.principal(request)
        if principal is None:
            return Denial(401, "Unauthorized", "Unauthorized: send `Authorization: Bearer <token>` (the admin token "
                                               "or a session token from `reviewer login`), or sign in")
        if principal.by_cookie and request.method not in SAFE_METHODS and not self.same_origin(request):
            return Denial(403, "Forbidden", "a state-changing request with the session cookie must come from this "
                                            "server's own pages (its Origin or Referer is another site)")
        if not principal.grant.allows(permission, account):
            scope = f" on account {account}" if account and permission in principal.grant.scopes else ""
            return Denial(403, "Forbidden", f"{principal.username} (roles: {', '.join(principal.roles) or 'none'}) "
                                            f"lacks the permission {permission}{scope}")
        session = principal.session
        if session is not None and session.connector != BREAK_GLASS and \
                needs_mfa(self.access(), permission, session.mfa_verified_at, self.clock()):
            return Denial(403, "MFARequired", f"{permission} needs an MFA check in the last 5 minutes; run one and "
                                              "try again")
        return principal

    def same_origin(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin") or request.headers.get("Referer")
        if not origin or origin == "null":
            return False
        return _origin(origin) == self.own_origin(request)

    def own_origin(self, request: web.Request) -> str:
        if self.public_url:
            return _origin(self.public_url)
        return _origin(f"{request.scheme}://{request.host}")


def _origin(url: str) -> str:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ""
    default = {"https": 443, "http": 80}.get(parts.scheme)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")
