"""The provider's redirect back (`GET /v1/webapi/oidc/callback`): the pending sign-in taken once,
the browser binding, the code exchanged and checked, roles mapped, the session made, and every
outcome recorded for the console's sign-in log (names of claims, never their values or a token).
A test sign-in makes no session: `Callback.test_result` keeps what came back for the console, for
both kinds (the SAML assertion consumer calls it too).
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from aiohttp import web

from bot.auth import oidc
from bot.auth.connectors import mfa_settings, oidc_settings
from bot.auth.errors import SignInError
from bot.auth.google_groups import service_account, with_google_groups
from bot.auth.groups import with_oidc_groups
from bot.auth.outcomes import PROTOCOL_CLAIMS, bound_to_browser, bounded, no_role_refusal, tested_key
from bot.auth.roles import RoleResult, map_roles
from bot.auth.sealing import seal
from bot.auth.sessions import (
    Session,
    create_session,
    rfc3339,
    session_seconds,
    token_key,
)
from bot.server.signin.pages import redirect, refusal_page

if TYPE_CHECKING:
    from bot.server.signin.routes import SignInRoutes

log = logging.getLogger("reviewer.signin")
_ERROR_CODE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_PARAM = 4096


class Callback:
    def __init__(self, routes: SignInRoutes) -> None:
        self.routes = routes

    async def handle(self, request: web.Request) -> web.StreamResponse:
        state, code = request.query.get("state", ""), request.query.get("code", "")
        if not state or len(state) > MAX_PARAM or len(code) > MAX_PARAM:
            return refusal_page(400, "state", "the provider's answer carries no usable state: start the sign-in "
                                              "again from the login page")
        pending = await self.routes.store.take_pending(token_key(state))
        if pending is None:
            return refusal_page(400, "state", "this sign-in is unknown, already used or older than 10 minutes: "
                                              "start it again from the login page")
        if "client_url" not in pending and not bound_to_browser(request.cookies.get(self.routes.cookies.binding, ""), pending):  # a browser flow: its binding
            error = SignInError("state", "this sign-in was started in another browser (its binding cookie is "
                                         "missing or differs); start it again here")
            await self.record(pending["connector"], None, error, None, flow=pending["flow"])
            return refusal_page(403, error.check, error.message)
        try:
            return await self._complete(request, pending, code)
        except SignInError as error:
            await self.record(pending["connector"], error.username, error, error.claim_names,
                              flow=pending["flow"])
            if "client_url" in pending:  # the terminal waits (a login or an MFA round): tell it which check failed
                return to_client(pending, {"error": {"check": error.check, "message": error.message}})
            return refusal_page(error.status, error.check, error.message, claim_names=error.claim_names,
                                hint=error.hint)

    async def _complete(self, request: web.Request, pending: dict[str, Any], code: str) -> web.StreamResponse:
        error = request.query.get("error")
        if error is not None:
            shown = error if _ERROR_CODE.fullmatch(error) else "an unreadable error"
            raise SignInError("provider-error", f"the provider refused the sign-in ({shown}); see the provider's "
                                                "own log for why", status=400)
        if not code:
            raise SignInError("code", "the provider's answer carries no code", status=400)
        if pending["flow"] == "mfa":
            return await self._complete_mfa(pending, code)
        routes = self.routes
        doc = await routes.connector_doc(pending["connector"])
        connector = oidc_settings(doc, routes.secrets)
        assert routes.provider is not None
        identity = await oidc.finish(connector, routes.provider, pending, code)
        names = sorted(identity.claims)
        try:  # directory groups (Entra ID overage, Google Workspace) join the claims before mapping
            claims = await with_oidc_groups(routes.provider.http, doc.get("spec") or {}, connector.client_id,
                                            connector.client_secret, identity.claims, routes.directory_url)
            claims = await with_google_groups(routes.provider.http, service_account(doc, routes.secrets), claims,
                                              routes.directory_url)
        except SignInError as refusal:
            refusal.username, refusal.claim_names = identity.username, names  # the log says who was refused
            raise
        mapped = map_roles(connector.claims_to_roles, claims)
        access = routes.gate.access()
        defined = [r for r in mapped.roles if r in access.roles]
        if pending["flow"] == "test":
            received = {name: value for name, value in claims.items() if name not in PROTOCOL_CLAIMS}  # groups joined
            return await self.test_result(pending, identity.username, received, names, mapped, defined, kind="oidc")
        if not defined:
            raise no_role_refusal(identity.username, names, mapped.roles, mapped.warnings,
                          [m.claim for m in connector.claims_to_roles])
        now = time.time()
        expires = now + session_seconds(routes.session_ttl, connector.max_age)
        session = Session(identity.username, connector.name, defined, now, expires)
        token = await create_session(routes.store, session)
        await self.record(connector.name, identity.username, None, names, flow=pending["flow"], roles=defined,
                          warnings=mapped.warnings + [f"role `{r}` is not defined in the admin file's access.roles"
                                                      for r in mapped.roles if r not in defined])
        if pending["flow"] == "console":
            return to_client(pending, {"token": token, "username": session.username, "roles": defined,
                                        "expires": session.expires_rfc3339()})
        response = redirect(pending["return_to"])
        routes.cookies.set(response, routes.cookies.session, token, int(expires - now))
        routes.cookies.clear(response, routes.cookies.binding)
        return response

    async def _complete_mfa(self, pending: dict[str, Any], code: str) -> web.StreamResponse:
        """The MFA round: the same user through the same connector, then `mfaVerifiedAt` is recorded
        on the session that asked for it."""
        routes = self.routes
        connector = mfa_settings(await routes.connector_doc(pending["connector"]), routes.secrets)
        assert routes.provider is not None
        identity = await oidc.finish(connector, routes.provider, pending, code)
        names = sorted(identity.claims)
        if identity.username != pending["username"]:
            raise SignInError("mfa-user", "the MFA check came back as another user than the one signed in; sign in "
                                          "at the provider as that user", username=identity.username,
                              claim_names=names)
        record = await routes.store.get_session(pending["session"])
        if record is None:
            raise SignInError("session", "the session ended during the MFA check: sign in again", status=401)
        record["mfa_verified_at"] = time.time()
        await routes.store.put_session(pending["session"], record, record["expires"])
        await self.record(connector.name, identity.username, None, names, flow="mfa", roles=record["roles"])
        return mfa_done(pending, identity.username, record["mfa_verified_at"])

    async def test_result(self, pending: dict[str, Any], username: str, received: dict[str, Any],
                          names: list[str], mapped: RoleResult, defined: list[str], *,
                          kind: str) -> web.StreamResponse:
        """A test sign-in (the console's), either kind: no session, whatever the roles; what came back
        (`received`: the claims or attributes to show, bounded here) is kept once, for ten minutes,
        under a random id the browser is sent back with (`?test=ID`), for the console to show.
        `names` are every name received, for the sign-in log."""
        result_id = secrets.token_urlsafe(16)
        shown = bounded(received)
        await self.routes.store.put_pending(tested_key(kind, pending["connector"], result_id), {
            "connector": pending["connector"], "kind": kind, "username": username, "received": shown,
            "omitted": len(received) - len(shown), "roles": mapped.roles, "defined": defined,
            "warnings": mapped.warnings}, time.time() + oidc.STATE_SECONDS)
        await self.record(pending["connector"], username, None, names, flow="test", roles=defined,
                          warnings=mapped.warnings, kind=kind)
        joiner = "&" if "?" in pending["return_to"] else "?"
        return redirect(f"{pending['return_to']}{joiner}{urlencode({'test': result_id})}")

    async def record(self, connector: str, username: str | None, error: SignInError | None,
                     claim_names: list[str] | None, *, flow: str, roles: list[str] | None = None,
                     warnings: list[str] | None = None, kind: str = "oidc") -> None:
        entry = {"at": time.time(), "connector": connector, "kind": kind, "flow": flow, "username": username,
                 "ok": error is None, "roles": roles or [], "check": error.check if error else None,
                 "message": error.message if error else None, "claims": claim_names or [],
                 "warnings": warnings or []}
        await self.routes.store.record_signin(entry)
        if error:
            log.info("sign-in refused: connector=%s check=%s username=%s", connector, error.check, username or "-",
                     extra={"username": username, "connector": connector, "flow": flow})
        else:
            log.info("%s: connector=%s username=%s roles=%s",
                     "test sign-in (no session)" if flow == "test" else "signed in", connector, username,
                     ",".join(roles or []), extra={"username": username, "connector": connector, "flow": flow})


def mfa_done(pending: dict[str, Any], username: str, verified_at: float) -> web.StreamResponse:
    """After a passed MFA round: the terminal's listener gets the sealed time, a browser its page."""
    if "client_url" in pending:
        return to_client(pending, {"username": username, "mfaVerifiedAt": rfc3339(verified_at)})
    return redirect(pending["return_to"])


def to_client(pending: dict[str, Any], answer: dict[str, Any]) -> web.StreamResponse:
    """Back to the terminal's listener with the sealed answer (its secret_key left out of the URL):
    the session, or the refusal (sealed too, so that only that client reads it)."""
    parts = urlsplit(pending["client_url"])
    sealed = seal(bytes.fromhex(pending["client_key"]), answer)
    target = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode({"response": sealed}), ""))
    return redirect(target)
