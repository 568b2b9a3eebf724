"""The OIDC sign-in starts (docs/connectors.md "Signing in"): the browser's sign-in, MFA round and
test sign-in, each a 302 to the provider bound to the browser by a cookie, and the terminal's two
(bot/server/signin/terminal.py). The provider's redirect back is bot/server/signin/callback.py."""

from __future__ import annotations

import secrets
import time
from dataclasses import replace
from typing import Any

from aiohttp import web

from bot.auth.connectors import OidcSettings, connector_doc, mfa_settings, oidc_settings
from bot.auth.errors import SignInError
from bot.auth.guard import Denial
from bot.auth.oidc import flow as oidc
from bot.auth.pending import PendingSignIn, keep
from bot.auth.redirects import RedirectError, web_return_path
from bot.auth.sessions import find_session, mfa_session, token_key
from bot.auth.signin_log import record_signin, unmatched
from bot.connectors.kinds import OIDC
from bot.server.signin import terminal
from bot.server.signin.context import SignInContext
from bot.server.signin.pages import redirect, refusal_page


async def oidc_doc(context: SignInContext, name: Any) -> dict[str, Any]:
    """The OIDC connector a sign-in names (refused by name when there is none)."""
    return await connector_doc(context.connector_store, OIDC.kind, "OIDC", name)


class OidcLogin:
    def __init__(self, context: SignInContext) -> None:
        self.context = context

    async def settings_of(self, name: Any) -> OidcSettings:
        return oidc_settings(await oidc_doc(self.context, name), self.context.secrets)

    async def mfa_settings_of(self, name: Any) -> OidcSettings:
        return mfa_settings(await oidc_doc(self.context, name), self.context.secrets)

    async def start(self, connector: OidcSettings, pending: PendingSignIn) -> str:
        """The provider's URL; the sign-in, with its OIDC request, kept under its state."""
        context = self.context
        started = await oidc.begin(connector, context.provider, public_url=context.public_url,
                                   signing_key=context.signing_key)
        await keep(context.store, token_key(started.state), replace(pending, oidc=started.request),
                   time.time() + oidc.STATE_SECONDS)
        return started.url

    async def login_web(self, request: web.Request) -> web.Response:
        name = request.query.get("connector_id")
        binding = secrets.token_urlsafe(32)  # fresh per start: a planted cookie is never reused
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            connector = await self.settings_of(name)
            url = await self.start(connector, PendingSignIn(connector.name, "web", return_to=return_to,
                                                            binding=token_key(binding)))
        except RedirectError as exc:
            return refusal_page(400, "redirect-url", str(exc))
        except SignInError as exc:
            await record_signin(self.context.store, str(name or "")[:253], None, exc, None, flow="web",
                                unauthenticated=unmatched(exc), ip=request.remote)
            return refusal_page(exc.status, exc.check, exc.message)
        return self.bound_redirect(url, binding)

    async def mfa_web(self, request: web.Request) -> web.Response:
        """A second round through the connector's `mfa` client for the signed-in browser; the
        callback records `mfaVerifiedAt` when the same user comes back."""
        context = self.context
        name = request.query.get("connector_id")
        token = request.cookies.get(context.cookies.session, "")
        session = await find_session(context.store, token) if token else None
        binding = secrets.token_urlsafe(32)
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            session = mfa_session(session, name, "sign in first")
            connector = await self.mfa_settings_of(name)
            url = await self.start(connector, PendingSignIn(
                connector.name, "mfa", return_to=return_to, binding=token_key(binding), session=token_key(token),
                username=session.username))
        except RedirectError as exc:
            return refusal_page(400, "redirect-url", str(exc))
        except SignInError as exc:
            await record_signin(context.store, str(name or "")[:253], session.username if session else None, exc,
                                None, flow="mfa", unauthenticated=session is None, ip=request.remote)
            return refusal_page(exc.status, exc.check, exc.message)
        return self.bound_redirect(url, binding)

    async def test_web(self, request: web.Request) -> web.Response:
        """The console's "test sign-in": the flow runs, and the claims and roles come back to
        `redirect_url` under `?test=ID` (bot/auth/outcomes.py `take_test_result`); no session is made."""
        allowed = await self.context.gate.check(request, "connectors:write")
        if isinstance(allowed, Denial):
            return refusal_page(allowed.status, "permission", allowed.message)
        name = request.query.get("connector_id")
        binding = secrets.token_urlsafe(32)  # fresh per start: a planted cookie is never reused
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            connector = await self.settings_of(name)
            url = await self.start(connector, PendingSignIn(connector.name, "test", return_to=return_to,
                                                            binding=token_key(binding)))
        except RedirectError as exc:
            return refusal_page(400, "redirect-url", str(exc))
        except SignInError as exc:
            await record_signin(self.context.store, str(name or "")[:253], None, exc, None, flow="test",
                                ip=request.remote)
            return refusal_page(exc.status, exc.check, exc.message)
        return self.bound_redirect(url, binding)

    def bound_redirect(self, url: str, binding: str) -> web.Response:
        cookies = self.context.cookies
        response = redirect(url)
        cookies.set(response, cookies.binding, binding, oidc.STATE_SECONDS)
        return response

    async def login_console(self, request: web.Request) -> web.Response:
        return await terminal.console_login(request, self.settings_of, self.start)

    async def mfa_console(self, request: web.Request) -> web.Response:
        return await terminal.mfa_console(self.context.store, request, self.mfa_settings_of, self.start)
