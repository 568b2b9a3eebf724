"""Sign-in sessions: an opaque random token, stored server-side under its SHA-256 (a leaked store
row is not a usable token), carried by the browser in a cookie (bot/server/signin/cookies.py) or
by the terminal as a bearer.

A session lasts the shorter of `REVIEWER_SESSION_TTL` and the connector's `max_age`.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from bot.auth.errors import SignInError
from bot.auth.store import AuthStore


def token_bytes(token: str) -> bytes:
    """A token as the bytes the client sent: aiohttp decodes headers and cookies leniently, so an
    undecodable byte arrives as a lone surrogate, which plain `encode()` refuses with an error."""
    return token.encode("utf-8", "surrogatepass")


def token_key(token: str) -> str:
    return hashlib.sha256(token_bytes(token)).hexdigest()


@dataclass(frozen=True)
class Session:
    username: str
    connector: str
    roles: list[str]
    created: float
    expires: float
    mfa_verified_at: float | None = None
    # A console session opened with the break-glass token: a slow hash of that token (never the
    # token), so that it lasts only while the server's REVIEWER_ADMIN_TOKEN is the same token.
    break_glass_hash: str | None = None

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Session:
        return cls(record["username"], record["connector"], list(record["roles"]), record["created"],
                   record["expires"], record.get("mfa_verified_at"), record.get("break_glass_hash"))

    def expires_rfc3339(self) -> str:
        return rfc3339(self.expires)


def rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def session_seconds(ttl: int, max_age: int | None) -> int:
    return min(ttl, max_age) if max_age else ttl


async def create_session(store: AuthStore, session: Session) -> str:
    """Stores the session; returns its token (shown once: to the browser or the terminal)."""
    token = secrets.token_urlsafe(32)
    await store.put_session(token_key(token), asdict(session), session.expires)
    return token


async def find_session(store: AuthStore, token: str) -> Session | None:
    if not token or len(token) > 256:
        return None
    record = await store.get_session(token_key(token))
    return Session.from_record(record) if record else None


def mfa_session(session: Session | None, name: Any, how_to_sign_in: str) -> Session:
    """The session an MFA round is for: there must be one, and the round goes through the
    connector it signed in with (either kind, browser or terminal)."""
    if session is None:
        raise SignInError("session", f"{how_to_sign_in}: an MFA check is for a signed-in user", status=401)
    if name != session.connector:
        raise SignInError("mfa", f"an MFA check goes through the connector you signed in with "
                                 f"(`{session.connector}`)", status=400)
    return session
