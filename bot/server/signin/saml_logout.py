"""The SAML single-logout endpoint, `GET|POST /v1/webapi/saml/slo/{name}`, and the start of a
logout at the IdP when a SAML session ends; the messages are made and checked by
bot/auth/saml/logout.py (signed, single use)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.auth.connectors import connector_doc
from bot.auth.errors import SignInError
from bot.auth.saml import protocol as saml
from bot.auth.saml.logout import logout_request_url, logout_response_url, read_logout_request, read_logout_response
from bot.auth.saml.settings import SamlSettings, saml_settings
from bot.connectors.kinds import SAML
from bot.server.signin.context import SignInContext
from bot.server.signin.pages import redirect, refusal_page

SIGNED_OUT = "/console/"


class LogoutRoutes:
    """`settings` reads a SAML connector's settings by name, its IdP's metadata filled in."""

    def __init__(self, context: SignInContext, settings: Callable[[Any], Awaitable[SamlSettings]]) -> None:
        self.context = context
        self.settings = settings

    async def start(self, session_key: str) -> str | None:
        """The IdP logout URL for a SAML session of a connector with `single_logout_url`, else None."""
        store = self.context.store
        index = await store.get_sso_index(session_key)
        if index is None:
            return None
        doc = await connector_doc(self.context.connector_store, SAML.kind, "SAML", index["connector"])
        settings = saml_settings(doc, self.context.secrets)
        if not settings.single_logout_url or settings.signing is None:
            return None
        request_id, url = logout_request_url(settings, index["name_id"], index.get("session_index"))
        await store.put_pending("saml-logout:" + request_id, {"connector": settings.name},
                                time.time() + saml.REQUEST_SECONDS)
        return url

    async def slo(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        query = dict(request.query) if request.method == "GET" else {k: str(v) for k, v in
                                                                      (await request.post()).items()}
        try:
            settings = await self.settings(name)
            if "SAMLRequest" in query:
                return await self._idp_initiated(settings, query)
            if "SAMLResponse" in query:
                in_response_to = read_logout_response(settings, query)
                pending = await self.context.store.take_pending("saml-logout:" + str(in_response_to))
                if pending is None or pending["connector"] != name:
                    raise SignInError("slo-response", "the LogoutResponse answers no pending logout of this "
                                                      "connector")
                return redirect(SIGNED_OUT)
            raise SignInError("slo-request", "send a SAMLRequest or a SAMLResponse", status=400)
        except SignInError as exc:
            return refusal_page(exc.status, exc.check, exc.message)

    async def _idp_initiated(self, settings: SamlSettings, query: dict[str, str]) -> web.Response:
        message = read_logout_request(settings, query)
        store = self.context.store
        for key, _ in await store.take_sso_sessions(settings.name, message.name_id.text.strip()):
            await store.delete_session(key)  # every session of that user here: the IdP ended theirs
        return redirect(logout_response_url(settings, message))
