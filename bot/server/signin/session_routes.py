"""The sign-in endpoints that are neither kind's: the connectors one may sign in with, who is
signed in, logging out (and on to a SAML IdP's logout), and the service's public keys."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.auth.connectors import display_of, is_ready, user_matches
from bot.auth.errors import SignInError
from bot.auth.service_keys import public_jwk
from bot.auth.sessions import rfc3339, token_key
from bot.connectors.kinds import OIDC, SAML
from bot.server.signin.context import SignInContext
from bot.server.signin.gate import bearer_of
from bot.server.signin.terminal import json_error

ProviderLogout = Callable[[str], Awaitable[str | None]]  # a session's key -> the IdP's logout URL, or None


class SessionRoutes:
    def __init__(self, context: SignInContext, provider_logout: ProviderLogout) -> None:
        self.context = context
        self.provider_logout = provider_logout  # SAML single logout (bot/server/signin/saml_logout.py)

    async def ready_docs(self, kind: str) -> list[dict[str, Any]]:
        items, _ = await self.context.connector_store.list(kind)
        return [doc for doc in items if is_ready(doc)]

    async def connectors(self, request: web.Request) -> web.Response:
        username = request.query.get("username")
        listed = [(kind, d) for kind, k in (("oidc", OIDC.kind), ("saml", SAML.kind))
                  for d in await self.ready_docs(k) if username is None or user_matches(d, username)]
        return web.json_response([{"name": d["metadata"]["name"], "kind": kind, "display": display_of(d)}
                                  for kind, d in listed])

    async def session(self, request: web.Request) -> web.Response:
        principal = await self.context.gate.principal(request)
        if principal is None:
            return json_error(401, "session", "not signed in")
        session = principal.session
        grant = principal.grant  # the gate's: the roles' permissions, or all of them for the break-glass token
        return web.json_response({
            "username": principal.username, "connector": session.connector if session else None,
            "roles": list(principal.roles), "permissions": grant.permissions,
            "expires": session.expires_rfc3339() if session else None,
            "mfaVerifiedAt": rfc3339(session.mfa_verified_at) if session and session.mfa_verified_at else None,
        }, headers={"Cache-Control": "no-store"})

    async def logout(self, request: web.Request) -> web.Response:
        cookies = self.context.cookies
        cookie = request.cookies.get(cookies.session)
        token = bearer_of(request) or cookie
        if token == cookie and cookie and not self.context.gate.same_origin(request):
            return json_error(403, "origin", "logging out with the session cookie must come from this server's "
                                             "own pages")
        answer: dict[str, Any] = {"signedOut": True}
        if token:
            try:  # a SAML session with single_logout_url: the browser goes on to the IdP's logout
                provider_logout = await self.provider_logout(token_key(token))
            except SignInError:
                provider_logout = None  # the connector is gone or broken: the local session still ends
            if provider_logout:
                answer["redirect_url"] = provider_logout
            await self.context.store.delete_session(token_key(token))
        response = web.json_response(answer, headers={"Cache-Control": "no-store"})
        cookies.clear(response, cookies.session)
        return response

    async def jwks(self, request: web.Request) -> web.Response:
        return web.json_response({"keys": [public_jwk(await self.context.signing_key())]},
                                 headers={"Cache-Control": "max-age=300"})
