"""The sign-in log the console shows (`/console/signins`): every outcome of a sign-in, an MFA round
or a test, either kind, with the names of the claims received (never their values or a token)."""

from __future__ import annotations

import logging
import time

from bot.auth.errors import SignInError
from bot.auth.store import AuthStore

log = logging.getLogger("reviewer.signin")


async def record_signin(store: AuthStore, connector: str, username: str | None, error: SignInError | None,
                        claim_names: list[str] | None, *, flow: str, roles: list[str] | None = None,
                        warnings: list[str] | None = None, kind: str = "oidc") -> None:
    entry = {"at": time.time(), "connector": connector, "kind": kind, "flow": flow, "username": username,
             "ok": error is None, "roles": roles or [], "check": error.check if error else None,
             "message": error.message if error else None, "claims": claim_names or [],
             "warnings": warnings or []}
    await store.record_signin(entry)
    if error:
        log.info("sign-in refused: connector=%s check=%s username=%s", connector, error.check, username or "-",
                 extra={"username": username, "connector": connector, "flow": flow})
    else:
        log.info("%s: connector=%s username=%s roles=%s",
                 "test sign-in (no session)" if flow == "test" else "signed in", connector, username,
                 ",".join(roles or []), extra={"username": username, "connector": connector, "flow": flow})
