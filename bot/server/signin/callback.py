"""The provider's redirect back (`GET /v1/webapi/oidc/callback`): the pending sign-in taken once,
the browser binding, the code exchanged and checked, roles mapped, the session made, and every
outcome recorded for the console's sign-in log (names of claims, never their values or a token).
A test sign-in makes no session: bot/server/signin/answers.py `test_answer` keeps what came back
for the console, for both kinds (the SAML assertion consumer calls it too).
"""

from __future__ import annotations

import re
import time

from aiohttp import web

from bot.auth.connectors import mfa_settings, oidc_settings
from bot.auth.directory.google import service_account, with_google_groups
from bot.auth.directory.groups import with_oidc_groups
from bot.auth.errors import SignInError
from bot.auth.oidc import flow as oidc
from bot.auth.outcomes import PROTOCOL_CLAIMS, bound_to_browser, no_role_refusal
from bot.auth.pending import PendingSignIn, take
from bot.auth.roles import map_roles
from bot.auth.sessions import Session, create_session, session_seconds, token_key
from bot.auth.signin_log import record_signin
from bot.server.signin.answers import mfa_done, test_answer, to_client
from bot.server.signin.context import SignInContext
from bot.server.signin.oidc_login import oidc_doc
from bot.server.signin.pages import redirect, refusal_page

_ERROR_CODE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_PARAM = 4096


class Callback:
    def __init__(self, context: SignInContext) -> None:
        self.context = context

    async def handle(self, request: web.Request) -> web.StreamResponse:
        state, code = request.query.get("state", ""), request.query.get("code", "")
        if not state or len(state) > MAX_PARAM or len(code) > MAX_PARAM:
            return refusal_page(400, "state", "the provider's answer carries no usable state: start the sign-in "
                                              "again from the login page")
        pending = await take(self.context.store, token_key(state))
        if pending is None:
            return refusal_page(400, "state", "this sign-in is unknown, already used or older than 10 minutes: "
                                              "start it again from the login page")
        cookie = request.cookies.get(self.context.cookies.binding, "")
        if pending.client is None and not bound_to_browser(cookie, pending.binding):  # a browser flow: its binding
            error = SignInError("state", "this sign-in was started in another browser (its binding cookie is "
                                         "missing or differs); start it again here")
            await record_signin(self.context.store, pending.connector, None, error, None, flow=pending.flow,
                                ip=request.remote)
            return refusal_page(403, error.check, error.message)
        try:
            return await self._complete(request, pending, code)
        except SignInError as error:
            await record_signin(self.context.store, pending.connector, error.username, error, error.claim_names,
                                flow=pending.flow, ip=request.remote)
            if pending.client is not None:  # the terminal waits (a login or an MFA round): tell it which check failed
                return to_client(pending.client, {"error": {"check": error.check, "message": error.message}})
            return refusal_page(error.status, error.check, error.message, claim_names=error.claim_names,
                                hint=error.hint)

    async def _complete(self, request: web.Request, pending: PendingSignIn, code: str) -> web.StreamResponse:
        error = request.query.get("error")
        if error is not None:
            shown = error if _ERROR_CODE.fullmatch(error) else "an unreadable error"
            raise SignInError("provider-error", f"the provider refused the sign-in ({shown}); see the provider's "
                                                "own log for why", status=400)
        if not code:
            raise SignInError("code", "the provider's answer carries no code", status=400)
        if pending.flow == "mfa":
            return await self._complete_mfa(pending, code)
        context = self.context
        doc = await oidc_doc(context, pending.connector)
        connector = oidc_settings(doc, context.secrets)
        identity = await oidc.finish(connector, context.provider, pending.oidc_request(), code)
        names = sorted(identity.claims)
        try:  # directory groups (Entra ID overage, Google Workspace) join the claims before mapping
            claims = await with_oidc_groups(context.provider.http, connector.groups, connector.client_id,
                                            connector.client_secret, identity.claims, context.directory_url)
            claims = await with_google_groups(context.provider.http, service_account(doc, context.secrets), claims,
                                              context.directory_url)
        except SignInError as refusal:
            refusal.username, refusal.claim_names = identity.username, names  # the log says who was refused
            raise
        mapped = map_roles(connector.claims_to_roles, claims)
        access = context.gate.access()
        defined = [r for r in mapped.roles if r in access.roles]
        if pending.flow == "test":
            received = {name: value for name, value in claims.items() if name not in PROTOCOL_CLAIMS}  # groups joined
            return await test_answer(context.store, pending, identity.username, received, names, mapped, defined,
                                     kind="oidc")
        if not defined:
            raise no_role_refusal(identity.username, names, mapped.roles, mapped.warnings,
                                  [m.claim for m in connector.claims_to_roles])
        now = time.time()
        expires = now + session_seconds(context.session_ttl, connector.max_age)
        session = Session(identity.username, connector.name, defined, now, expires)
        token = await create_session(context.store, session)
        await record_signin(context.store, connector.name, identity.username, None, names, flow=pending.flow,
                            ip=request.remote, roles=defined, warnings=mapped.warnings + [
                                f"role `{r}` is not defined in the admin file's access.roles"
                                for r in mapped.roles if r not in defined])
        if pending.flow == "console":
            return to_client(pending.terminal(), {"token": token, "username": session.username, "roles": defined,
                                                  "expires": session.expires_rfc3339()})
        response = redirect(pending.return_to)
        context.cookies.set(response, context.cookies.session, token, int(expires - now))
        context.cookies.clear(response, context.cookies.binding)
        return response

    async def _complete_mfa(self, pending: PendingSignIn, code: str) -> web.StreamResponse:
        """The MFA round: the same user through the same connector, then `mfaVerifiedAt` is recorded
        on the session that asked for it."""
        context = self.context
        connector = mfa_settings(await oidc_doc(context, pending.connector), context.secrets)
        identity = await oidc.finish(connector, context.provider, pending.oidc_request(), code)
        names = sorted(identity.claims)
        if identity.username != pending.username:
            raise SignInError("mfa-user", "the MFA check came back as another user than the one signed in; sign in "
                                          "at the provider as that user", username=identity.username,
                              claim_names=names)
        record = await context.store.get_session(pending.session)
        if record is None:
            raise SignInError("session", "the session ended during the MFA check: sign in again", status=401)
        record["mfa_verified_at"] = time.time()
        await context.store.put_session(pending.session, record, record["expires"])
        await record_signin(context.store, connector.name, identity.username, None, names, flow="mfa",
                            roles=record["roles"])
        return mfa_done(pending, identity.username, record["mfa_verified_at"])
