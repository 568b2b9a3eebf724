"""The answers both kinds of sign-in give once the provider has spoken: back to the terminal's
listener with a sealed answer, the end of an MFA round, and a test sign-in's redirect."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from aiohttp import web

from bot.auth.outcomes import keep_test_result
from bot.auth.pending import PendingSignIn, Terminal
from bot.auth.roles import RoleResult
from bot.auth.sealing import seal
from bot.auth.sessions import rfc3339
from bot.auth.signin_log import record_signin
from bot.auth.store import AuthStore
from bot.server.signin.pages import redirect


def to_client(client: Terminal, answer: dict[str, Any]) -> web.StreamResponse:
    """Back to the terminal's listener with the sealed answer (its secret_key left out of the URL):
    the session, or the refusal (sealed too, so that only that client reads it)."""
    parts = urlsplit(client.url)
    sealed = seal(bytes.fromhex(client.key), answer)
    target = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode({"response": sealed}), ""))
    return redirect(target)


def mfa_done(pending: PendingSignIn, username: str, verified_at: float) -> web.StreamResponse:
    """After a passed MFA round: the terminal's listener gets the sealed time, a browser its page."""
    if pending.client is not None:
        return to_client(pending.client, {"username": username, "mfaVerifiedAt": rfc3339(verified_at)})
    return redirect(pending.return_to)


async def test_answer(store: AuthStore, pending: PendingSignIn, username: str, received: dict[str, Any],
                      names: list[str], mapped: RoleResult, defined: list[str], *, kind: str) -> web.StreamResponse:
    """A test sign-in (the console's), either kind: no session, whatever the roles; what came back
    is kept once (bot/auth/outcomes.py `keep_test_result`) under a random id the browser is sent
    back with (`?test=ID`), for the console to show. `names` are every name received, for the
    sign-in log."""
    result_id = await keep_test_result(store, pending.connector, kind, username, received, mapped, defined)
    await record_signin(store, pending.connector, username, None, names, flow="test", roles=defined,
                        warnings=mapped.warnings, kind=kind)
    joiner = "&" if "?" in pending.return_to else "?"
    return redirect(f"{pending.return_to}{joiner}{urlencode({'test': result_id})}")
