"""What a sign-in's answer comes to, both kinds (OIDC and SAML), as plain decisions: the refusal
when no defined role is mapped, the browser binding, and a test sign-in's result, bounded and kept
once for the console. The routes that answer with them are bot/server/signin/."""

from __future__ import annotations

import hmac
import secrets
import time
from typing import Any

from bot.auth.errors import SignInError
from bot.auth.oidc.flow import STATE_SECONDS
from bot.auth.roles import RoleResult
from bot.auth.sessions import token_key
from bot.auth.store import AuthStore

# The flow's own claims, not the user's. `_claim_sources` may hold an access token for a
# distributed claim's endpoint (OpenID Connect Core 5.6.2): never shown.
PROTOCOL_CLAIMS = {"nonce", "at_hash", "c_hash", "s_hash", "sid", "jti", "_claim_names", "_claim_sources"}
MAX_SHOWN = 100  # claims or attributes a test result keeps (the page says how many more came)
MAX_SHOWN_CHARS = 64 * 1024  # of their values together: a result is kept in the store for ten minutes
MAX_SHOWN_NAME = 200  # characters of a claim's or attribute's name kept


def tested_key(kind: str, connector: str, result_id: str) -> str:
    """Where a test sign-in's result is kept: under its connector too, so that an id carried to
    another connector's page neither shows there nor is used up there."""
    return token_key(f"test-result:{kind}:{connector}:{result_id}")


async def take_test_result(store: AuthStore, kind: str, connector: str, result_id: str) -> dict[str, Any] | None:
    """A test sign-in's result for this connector (`kind` "oidc" or "saml"), once (None: unknown,
    another connector's, already shown or older than ten minutes)."""
    if not result_id or len(result_id) > 64:
        return None
    return await store.take_pending(tested_key(kind, connector, result_id))


async def keep_test_result(store: AuthStore, connector: str, kind: str, username: str, received: dict[str, Any],
                           mapped: RoleResult, defined: list[str]) -> str:
    """Keeps what a test sign-in received (`received`: the claims or attributes to show, bounded
    here) and the roles they map to, once, for ten minutes; returns the random id it is kept under."""
    result_id = secrets.token_urlsafe(16)
    kept = bounded(received)
    await store.put_pending(tested_key(kind, connector, result_id), {
        "connector": connector, "kind": kind, "username": username, "received": kept,
        "omitted": len(received) - len(kept), "roles": mapped.roles, "defined": defined,
        "warnings": mapped.warnings}, time.time() + STATE_SECONDS)
    return result_id


def bounded(received: dict[str, Any]) -> dict[str, Any]:
    """What a test result keeps: the first MAX_SHOWN names in order, each value bounded by `shown`,
    until their values reach MAX_SHOWN_CHARS together (the rest are counted as omitted)."""
    kept_names: dict[str, Any] = {}
    budget = MAX_SHOWN_CHARS
    for name, value in sorted(received.items()):
        kept = shown(value)
        size = sum(map(len, kept)) if isinstance(kept, list) else len(str(kept))
        budget -= len(name[:MAX_SHOWN_NAME]) + size
        if len(kept_names) == MAX_SHOWN or budget < 0:
            break
        kept_names.setdefault(name[:MAX_SHOWN_NAME], kept)
    return kept_names


def shown(value: Any) -> Any:
    """A claim's or attribute's value as the test page shows it: strings and lists of them, bounded."""
    if isinstance(value, list):
        return [str(v)[:200] for v in value[:50]]
    return value if isinstance(value, bool | int | float) else str(value)[:200]


def bound_to_browser(cookie: str, binding: str) -> bool:
    """Whether the binding cookie the browser sent is the one its web sign-in was started with
    (`binding`: the hash its pending sign-in keeps)."""
    return bool(cookie) and hmac.compare_digest(token_key(cookie), binding)


def no_role_refusal(username: str, names: list[str], roles: list[str], warnings: list[str],
                    mapped_claims: list[str]) -> SignInError:
    """The refusal of a sign-in that maps to no role the admin file's access.roles defines."""
    if roles:
        message = (f"the roles the claims map to ({', '.join(roles)}) are not defined in the admin file's "
                   "access.roles, so they grant nothing")
        check = "undefined-roles"
    else:
        looked_at = ", ".join(sorted(set(mapped_claims))) or "none (the connector has no claims_to_roles)"
        message = f"no role: no claims_to_roles entry matched (claims the mappings look at: {looked_at})"
        check = "no-roles"
    return SignInError(check, message, username=username, claim_names=names, hint=" ".join(warnings))
