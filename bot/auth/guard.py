"""Who is calling, and may they: the decisions of the one check every resource and admin API route
runs (the request side, headers and cookies, is bot/server/signin/gate.py).

A caller is the break-glass `REVIEWER_ADMIN_TOKEN` (every permission, no MFA), a session token
sent as `Authorization: Bearer` (the terminal), or the session cookie (the browser). A console
session opened with the break-glass token carries a slow hash of that token and is honoured only
while the server's token hashes the same: rotating or unsetting the token ends it. A state-
changing request authenticated by the cookie must come from this server's own origin (`Origin`,
else `Referer`), so another site cannot make a signed-in browser write (CSRF). What a session may
do is read per request from the admin file's `access` (a reload applies at once).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.auth.access import EVERYTHING, Access, Grant, grant_for, needs_mfa
from bot.auth.connectors import is_ready
from bot.auth.redirects import origin_of
from bot.auth.sessions import Session, find_session, token_bytes
from bot.auth.store import AuthStore
from bot.auth.throttle import Throttle
from bot.connectors.kinds import OIDC, SAML
from bot.store.model import ConnectorStore

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# The connector of a console session opened with the break-glass token: it has every permission,
# as the token has. Parentheses cannot appear in a connector's name, so no sign-in can claim it.
BREAK_GLASS = "(break-glass token)"
# The salt of the break-glass hash: made once per installation, kept in the sign-in store so that
# every process and every restart hashes alike. scrypt makes guessing a weak token from a leaked
# session row slow; it runs once per process, not per request.
BREAK_GLASS_SALT = "break-glass-session-salt"
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}


@dataclass(frozen=True)
class Principal:
    username: str
    roles: tuple[str, ...]
    grant: Grant
    session: Session | None  # None: the break-glass token
    by_cookie: bool = False


@dataclass(frozen=True)
class Denial:
    status: int  # 401, 403 or 429
    reason: str  # Unauthorized, Forbidden, MFARequired, TooManyRequests
    message: str
    retry_after: int | None = None  # seconds, with 429


class Guard:
    """Who a token is, and what they may do: the gate's decisions, given what the request offered."""

    def __init__(self, *, admin_token: str | None, store: AuthStore | None = None,
                 access: Callable[[], Access] | None = None, connectors: ConnectorStore | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.connectors = connectors
        self.admin_token = admin_token.encode() if admin_token else None
        self.store = store
        self.access = access or (lambda: Access({}))
        self.clock = clock
        self.throttle = Throttle()  # guesses at the admin token, per address (bot/auth/throttle.py)
        self._break_glass_hash: str | None = None

    async def principal(self, bearer: str, cookie: str | None, address: str | None = None) -> Principal | None:
        """The caller of a request from `address` that sent `bearer` (the `Authorization: Bearer`
        token, "" for none) and `cookie` (the session cookie's value): a bearer, when sent, decides
        alone. A bearer that is neither the admin token nor a session is a failed guess at the
        token, and an address throttled for its guesses has its bearer never compared with it."""
        if bearer:
            throttled = self.throttle.wait(address) is not None
            if not throttled and self.admin_token and hmac.compare_digest(token_bytes(bearer), self.admin_token):
                return Principal("admin-token", (), EVERYTHING, None)
            found = await self._from_session(bearer, by_cookie=False)
            if found is None and not throttled:
                self.throttle.failed(address)
            return found
        return await self._from_session(cookie, by_cookie=True) if cookie else None

    def throttled(self, address: str | None) -> Denial | None:
        """The refusal of an address throttled for its guesses at the admin token, if it is."""
        wait = self.throttle.wait(address)
        if wait is None:
            return None
        return Denial(429, "TooManyRequests", f"too many failed attempts at the admin token from this address: try "
                                              f"again in {wait} s", retry_after=wait)

    async def _from_session(self, token: str, *, by_cookie: bool) -> Principal | None:
        if self.store is None:
            return None
        session = await find_session(self.store, token)
        if session is None or not await self._still_valid(session):
            return None
        grant = EVERYTHING if session.connector == BREAK_GLASS else grant_for(self.access(), session.roles)
        return Principal(session.username, tuple(session.roles), grant, session, by_cookie)

    async def _still_valid(self, session: Session) -> bool:
        """A console session opened with the break-glass token lasts while the server's token is
        the one it was opened with; a sign-in's session while its connector is ready."""
        if session.connector == BREAK_GLASS:
            current = await self.break_glass_hash()
            return current is not None and session.break_glass_hash is not None and \
                hmac.compare_digest(session.break_glass_hash, current)
        return await self.connector_ready(session.connector)

    async def break_glass_hash(self) -> str | None:
        """The hash a break-glass console session is bound to (None: no token is set)."""
        if self.admin_token is None or self.store is None:
            return None
        if self._break_glass_hash is None:
            salt = await self.store.key(BREAK_GLASS_SALT, lambda: secrets.token_hex(16))
            digest = await asyncio.to_thread(hashlib.scrypt, self.admin_token, salt=bytes.fromhex(salt), **_SCRYPT)
            self._break_glass_hash = digest.hex()
        return self._break_glass_hash

    async def connector_ready(self, name: str) -> bool:
        """Whether a session's connector still exists and is reconciled: a session is honoured only
        as long as the connector it was signed in through (deleted or broken, its sessions end)."""
        if self.connectors is None:
            return True  # no sign-in here: only the admin token passes, and it has no connector
        for kind in (OIDC.kind, SAML.kind):
            doc = await self.connectors.get(kind, name)
            if doc is not None:
                return is_ready(doc)
        return False

    async def end_sessions(self, connector: str) -> int:
        """Ends the sessions of a deleted connector (the read check above would refuse them anyway;
        this keeps a later connector of the same name from reviving them)."""
        return await self.store.delete_connector_sessions(connector) if self.store is not None else 0

    def decide(self, principal: Principal | None, permission: str, account: str | None, *,
               some_account: bool, cross_site_write: Callable[[], bool]) -> Principal | Denial:
        """The caller, when allowed `permission` on an object of `account` (None: an object of no
        account, such as a connector, which a grant narrowed to accounts does not allow). With
        `some_account`, a grant on any account will do: for a page that lists objects and then
        shows each only where `Grant.allows` says so. `cross_site_write` says whether the request
        changes state and comes from another origin (asked only of a caller by cookie)."""
        if principal is None:
            return Denial(401, "Unauthorized", "Unauthorized: send `Authorization: Bearer <token>` (the admin token "
                                               "or a session token from `reviewer login`), or sign in")
        if principal.by_cookie and cross_site_write():
            return Denial(403, "Forbidden", "a state-changing request with the session cookie must come from this "
                                            "server's own pages (its Origin or Referer is another site)")
        allowed = principal.grant.holds(permission) if some_account else principal.grant.allows(permission, account)
        if not allowed:
            return Denial(403, "Forbidden", _lacks(principal, permission, account))
        session = principal.session
        if session is not None and session.connector != BREAK_GLASS and \
                needs_mfa(self.access(), permission, session.mfa_verified_at, self.clock()):
            return Denial(403, "MFARequired", f"{permission} needs an MFA check in the last 5 minutes; run one and "
                                              "try again")
        return principal


def same_origin(claimed: str | None, own: str) -> bool:
    """Whether a request's `Origin` (else `Referer`) is `own`, this server's origin."""
    if not claimed or claimed == "null":
        return False
    return origin_of(claimed) == own


def own_origin(public_url: str | None, scheme: str, host: str) -> str:
    """This server's origin: its public URL's, else the one the request was made to."""
    if public_url:
        return origin_of(public_url)
    return origin_of(f"{scheme}://{host}")


def _lacks(principal: Principal, permission: str, account: str | None) -> str:
    """Why a 403: the permission missing, and, for a narrowed grant, on what."""
    who = f"{principal.username} (roles: {', '.join(principal.roles) or 'none'})"
    globs = principal.grant.scopes.get(permission) if principal.grant.holds(permission) else None
    if globs is None:
        return f"{who} lacks the permission {permission}"
    if account is not None:
        return f"{who} lacks the permission {permission} on account {account}"
    return (f"{who} holds {permission} only on the accounts {', '.join(globs)}; this belongs to no one account "
            "and needs the permission on every account")
