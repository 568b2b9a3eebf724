"""The sign-in log the console shows (`/console/signins`): every outcome of a sign-in, an MFA round
or a test, either kind, with the names of the claims received (never their values or a token).

A refusal of a request that showed nothing of a sign-in under way — a login started with a
connector that is not there, a callback or a SAML response nobody asked for — is `unauthenticated`:
anyone can make as many as they like, so the store keeps them apart and fewer, and they never push
a real entry (a sign-in, a refusal after the identity provider answered, a guess at the break-glass
token) out of the log."""

from __future__ import annotations

import logging
import time

from bot.auth.errors import SignInError, UnknownConnector
from bot.auth.store import AuthStore

log = logging.getLogger("reviewer.signin")


# What a request can be refused for before it matched anything real: a SAML response that is not
# one, or one that answers no request this server has waiting.
_UNMATCHED_CHECKS = frozenset({"saml-response", "xml-comment", "saml-in-response-to"})


def unmatched(error: SignInError) -> bool:
    """Whether a sign-in was refused before anything real was matched: it names no connector
    there is (a connector that is there but broken is a real entry), or its SAML response is none
    or answers no request waiting."""
    return isinstance(error, UnknownConnector) or error.check in _UNMATCHED_CHECKS


async def record_signin(store: AuthStore, connector: str, username: str | None, error: SignInError | None,
                        claim_names: list[str] | None, *, flow: str, roles: list[str] | None = None,
                        warnings: list[str] | None = None, kind: str = "oidc", unauthenticated: bool = False,
                        ip: str | None = None) -> None:
    entry = {"at": time.time(), "connector": connector, "kind": kind, "flow": flow, "username": username,
             "ok": error is None, "roles": roles or [], "check": error.check if error else None,
             "message": error.message if error else None, "claims": claim_names or [],
             "warnings": warnings or [], "ip": ip}
    if unauthenticated and error is not None:
        entry["unauthenticated"] = True
    await store.record_signin(entry)
    if error:
        log.info("sign-in refused: connector=%s check=%s username=%s", connector, error.check, username or "-",
                 extra={"username": username, "connector": connector, "flow": flow})
    else:
        log.info("%s: connector=%s username=%s roles=%s",
                 "test sign-in (no session)" if flow == "test" else "signed in", connector, username,
                 ",".join(roles or []), extra={"username": username, "connector": connector, "flow": flow})
