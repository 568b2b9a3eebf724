"""The sign-in routes (docs/connectors.md "Signing in"), at Teleport's web API paths:

    GET  /v1/webapi/connectors[?username=U]      connectors one may sign in with (identifier-first)
    GET  /v1/webapi/oidc/login/web               → 302 to the provider
    POST /v1/webapi/oidc/login/console           terminal sign-in: {"redirect_url": provider URL}
    GET  /v1/webapi/oidc/mfa/web                 an MFA round for the signed-in browser → 302
    POST /v1/webapi/oidc/mfa/console             an MFA round for the terminal's bearer session
    GET  /v1/webapi/oidc/test/web                a test sign-in (connectors:write): no session kept
    GET  /v1/webapi/oidc/callback                the provider's redirect back
    GET  /v1/webapi/session                      who is signed in
    POST /v1/webapi/logout                       ends the session
    GET  /.well-known/jwks.json                  the service's public keys (request objects)
    /v1/webapi/saml/…                            SAML sign-in: bot/server/signin/saml.py

`setup_signin(app, …)` adds them and returns the `Gate` the resource and admin APIs check.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp import web

from bot.auth import oidc
from bot.auth.access import Access
from bot.auth.connectors import display_of, is_ready, mfa_settings, oidc_settings, user_matches
from bot.auth.errors import SignInError
from bot.auth.guard import Denial
from bot.auth.oidc_provider import ProviderCache
from bot.auth.redirects import RedirectError, check_client_redirect, web_return_path
from bot.auth.saml import KEY_FILES
from bot.auth.service_keys import KEY_NAME, make_private_pem, public_jwk
from bot.auth.sessions import find_session, mfa_session, rfc3339, token_key
from bot.auth.store import AuthStore
from bot.connectors.descriptor_fetch import DescriptorSource
from bot.connectors.field_checks import ConnectorSecrets
from bot.connectors.kinds import NAME_RULE, OIDC, SAML, is_connector_name
from bot.documents.bounded_read import read_at_most
from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.server.signin.callback import Callback
from bot.server.signin.cookies import Cookies
from bot.server.signin.gate import Gate
from bot.server.signin.pages import redirect, refusal_page
from bot.server.signin.saml import add_saml_routes
from bot.store.model import ConnectorStore

log = logging.getLogger("reviewer.signin")
MAX_BODY = 16 * 1024
SIGNIN_STORE = web.AppKey("signin_store", AuthStore)  # the console's sign-in log reads it


def setup_signin(app: web.Application, *, connectors: ConnectorStore, store: AuthStore,
                 secrets: ConnectorSecrets, public_url: str | None, session_ttl: int, admin_token: str | None,
                 access: Callable[[], Access], directory_url: str | None = None,
                 descriptors: DescriptorSource | None = None) -> Gate:
    """Adds the sign-in routes and their start/stop step; returns the APIs' gate. `descriptors`
    is the SAML metadata source shared with the resource API; without one, sign-in has its own."""
    app[SIGNIN_STORE] = store
    gate = Gate(admin_token=admin_token, store=store, access=access, public_url=public_url, connectors=connectors)
    if descriptors is None:
        descriptors = DescriptorSource()
        app.on_cleanup.append(lambda _: descriptors.close())
    routes = SignInRoutes(connectors, secrets, store, gate, public_url, session_ttl, descriptors)
    routes.directory_url = directory_url
    app.router.add_get("/v1/webapi/connectors", routes.connectors)
    app.router.add_get("/v1/webapi/oidc/login/web", routes.login_web)
    app.router.add_post("/v1/webapi/oidc/login/console", routes.login_console)
    app.router.add_get("/v1/webapi/oidc/mfa/web", routes.mfa_web)
    app.router.add_post("/v1/webapi/oidc/mfa/console", routes.oidc_mfa_console)
    app.router.add_get("/v1/webapi/oidc/test/web", routes.test_web)
    app.router.add_get("/v1/webapi/oidc/callback", routes.callback.handle)
    app.router.add_get("/v1/webapi/session", routes.session)
    app.router.add_post("/v1/webapi/logout", routes.logout)
    app.router.add_get("/.well-known/jwks.json", routes.jwks)
    add_saml_routes(app, routes)
    app.cleanup_ctx.append(routes.lifecycle)
    return gate


def json_error(status: int, check: str, message: str) -> web.Response:
    return web.json_response({"error": {"check": check, "message": message}}, status=status,
                             headers={"Cache-Control": "no-store"})


class SignInRoutes:
    def __init__(self, connectors: ConnectorStore, secrets: ConnectorSecrets, store: AuthStore, gate: Gate,
                 public_url: str | None, session_ttl: int, descriptors: DescriptorSource) -> None:
        self.connector_store, self.secrets, self.store, self.gate = connectors, secrets, store, gate
        self.descriptors = descriptors  # SAML metadata, fetched at reconcile time and kept for sign-in
        self.public_url, self.session_ttl = public_url, session_ttl
        self.provider: ProviderCache | None = None
        self.directory_url: str | None = None  # REVIEWER_DIRECTORY_URL: group lookups go there instead
        self.saml_logout: Callable[[str], Awaitable[str | None]] | None = None  # set by the SAML routes
        self.callback = Callback(self)

    async def lifecycle(self, app: web.Application) -> AsyncIterator[None]:
        await self.store.open()
        async with aiohttp.ClientSession() as http:
            self.provider = ProviderCache(http)
            try:
                yield
            finally:
                await self.store.close()
                KEY_FILES.remove()

    @property
    def cookies(self) -> Cookies:
        return self.gate.cookies

    async def signing_key(self) -> str:
        return await self.store.key(KEY_NAME, make_private_pem)

    async def oidc_docs(self, kind: str = OIDC.kind) -> list[dict[str, Any]]:
        items, _ = await self.connector_store.list(kind)
        return [doc for doc in items if is_ready(doc)]

    async def connector_doc(self, name: Any) -> dict[str, Any]:
        if not isinstance(name, str) or not name:
            raise SignInError("connector", "connector_id is required: the name of an OIDC connector", status=400)
        if not is_connector_name(name):
            raise SignInError("connector", f"connector_id must be {NAME_RULE}", status=400)
        doc = await self.connector_store.get(OIDC.kind, name)
        if doc is None:
            raise SignInError("connector", f"there is no OIDC connector named `{name[:100]}`", status=404)
        return doc

    async def settings_of(self, name: Any) -> oidc.OidcSettings:
        return oidc_settings(await self.connector_doc(name), self.secrets)

    async def connectors(self, request: web.Request) -> web.Response:
        username = request.query.get("username")
        listed = [(kind, d) for kind, k in (("oidc", OIDC.kind), ("saml", SAML.kind))
                  for d in await self.oidc_docs(k) if username is None or user_matches(d, username)]
        return web.json_response([{"name": d["metadata"]["name"], "kind": kind, "display": display_of(d)}
                                  for kind, d in listed])

    async def _start(self, connector: oidc.OidcSettings, pending: dict[str, Any]) -> str:
        assert self.provider is not None
        started = await oidc.begin(connector, self.provider, public_url=self.public_url,
                                   signing_key=self.signing_key)
        await self.store.put_pending(token_key(started.state), {**started.pending, **pending},
                                     time.time() + oidc.STATE_SECONDS)
        return started.url

    async def login_web(self, request: web.Request) -> web.Response:
        name = request.query.get("connector_id")
        binding = secrets.token_urlsafe(32)  # fresh per start: a planted cookie is never reused
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            connector = await self.settings_of(name)
            url = await self._start(connector, {"flow": "web", "return_to": return_to,
                                                "binding": token_key(binding)})
        except RedirectError as exc:
            return refusal_page(400, "redirect-url", str(exc))
        except SignInError as exc:
            await self.callback.record(str(name or "")[:253], None, exc, None, flow="web")
            return refusal_page(exc.status, exc.check, exc.message)
        return self._bound_redirect(url, binding)

    async def mfa_web(self, request: web.Request) -> web.Response:
        """A second round through the connector's `mfa` client for the signed-in browser; the
        callback records `mfaVerifiedAt` when the same user comes back."""
        name = request.query.get("connector_id")
        token = request.cookies.get(self.cookies.session, "")
        session = await find_session(self.store, token) if token else None
        binding = secrets.token_urlsafe(32)
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            session = mfa_session(session, name, "sign in first")
            connector = mfa_settings(await self.connector_doc(name), self.secrets)
            url = await self._start(connector, {"flow": "mfa", "return_to": return_to, "binding": token_key(binding),
                                                "session": token_key(token), "username": session.username})
        except RedirectError as exc:
            return refusal_page(400, "redirect-url", str(exc))
        except SignInError as exc:
            await self.callback.record(str(name or "")[:253], session.username if session else None, exc, None,
                                       flow="mfa")
            return refusal_page(exc.status, exc.check, exc.message)
        return self._bound_redirect(url, binding)

    async def oidc_mfa_console(self, request: web.Request) -> web.Response:
        async def settings(name: Any) -> Any:
            return mfa_settings(await self.connector_doc(name), self.secrets)
        return await self.mfa_console(request, settings, self._start)

    async def mfa_console(self, request: web.Request, settings_of: Callable[[Any], Awaitable[Any]],
                          start: Callable[[Any, dict[str, Any]], Awaitable[str]]) -> web.Response:
        """A terminal's MFA round, either kind: the bearer session's user, through the connector it
        signed in with, back to the terminal's checked listener."""
        scheme, _, bearer = request.headers.get("Authorization", "").partition(" ")
        token = bearer.strip() if scheme.lower() == "bearer" else ""
        session = await find_session(self.store, token) if token else None
        body = await _json_body(request)
        if body is None:
            return json_error(400, "request", 'the body must be a JSON object {"connector_id", "redirect_url"}')
        try:
            session = mfa_session(session, body.get("connector_id"), "send the session as `Authorization: Bearer <token>`")
            connector = await settings_of(session.connector)
            client = check_client_redirect(body.get("redirect_url") or "",
                                           allowed_https_hostnames=connector.allowed_https_hostnames,
                                           insecure_allowed_cidr_ranges=connector.insecure_allowed_cidr_ranges)
            url = await start(connector, {"flow": "mfa", "client_url": client.url,
                                          "client_key": client.secret_key.hex(), "session": token_key(token),
                                          "username": session.username})
        except RedirectError as exc:
            return json_error(400, "redirect-url", str(exc))
        except SignInError as exc:
            return json_error(exc.status, exc.check, exc.message)
        return web.json_response({"redirect_url": url}, headers={"Cache-Control": "no-store"})

    async def test_web(self, request: web.Request) -> web.Response:
        """The console's "test sign-in": the flow runs, and the claims and roles come back to
        `redirect_url` under `?test=ID` (see `take_test_result`); no session is made."""
        allowed = await self.gate.check(request, "connectors:write")
        if isinstance(allowed, Denial):
            return refusal_page(allowed.status, "permission", allowed.message)
        name = request.query.get("connector_id")
        binding = secrets.token_urlsafe(32)  # fresh per start: a planted cookie is never reused
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            url = await self._start(await self.settings_of(name), {"flow": "test", "return_to": return_to,
                                                                  "binding": token_key(binding)})
        except RedirectError as exc:
            return refusal_page(400, "redirect-url", str(exc))
        except SignInError as exc:
            await self.callback.record(str(name or "")[:253], None, exc, None, flow="test")
            return refusal_page(exc.status, exc.check, exc.message)
        return self._bound_redirect(url, binding)

    def _bound_redirect(self, url: str, binding: str) -> web.Response:
        response = redirect(url)
        self.cookies.set(response, self.cookies.binding, binding, oidc.STATE_SECONDS)
        return response

    async def login_console(self, request: web.Request) -> web.Response:
        return await self.console_login(request, self.settings_of, self._start)

    async def console_login(self, request: web.Request, settings_of: Callable[[Any], Awaitable[Any]],
                            start: Callable[[Any, dict[str, Any]], Awaitable[str]]) -> web.Response:
        """A terminal's sign-in, either kind: the client's listener checked as Teleport checks it,
        before any provider is contacted; the answer is the URL to open in a browser."""
        body = await _json_body(request)
        if body is None:
            return json_error(400, "request", 'the body must be a JSON object {"connector_id", "redirect_url"}')
        try:
            connector = await settings_of(body.get("connector_id"))
            client = check_client_redirect(body.get("redirect_url") or "",
                                           allowed_https_hostnames=connector.allowed_https_hostnames,
                                           insecure_allowed_cidr_ranges=connector.insecure_allowed_cidr_ranges)
            url = await start(connector, {"flow": "console", "client_url": client.url,
                                          "client_key": client.secret_key.hex()})
        except RedirectError as exc:
            return json_error(400, "redirect-url", str(exc))
        except SignInError as exc:
            return json_error(exc.status, exc.check, exc.message)
        return web.json_response({"redirect_url": url}, headers={"Cache-Control": "no-store"})

    async def session(self, request: web.Request) -> web.Response:
        principal = await self.gate.principal(request)
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
        cookie = request.cookies.get(self.cookies.session)
        scheme, _, bearer = request.headers.get("Authorization", "").partition(" ")
        token = bearer.strip() if scheme.lower() == "bearer" and bearer.strip() else cookie
        if token == cookie and cookie and not self.gate.same_origin(request):
            return json_error(403, "origin", "logging out with the session cookie must come from this server's "
                                             "own pages")
        answer: dict[str, Any] = {"signedOut": True}
        if token:
            try:  # a SAML session with single_logout_url: the browser goes on to the IdP's logout
                provider_logout = await self.saml_logout(token_key(token)) if self.saml_logout else None
            except SignInError:
                provider_logout = None  # the connector is gone or broken: the local session still ends
            if provider_logout:
                answer["redirect_url"] = provider_logout
            await self.store.delete_session(token_key(token))
        response = web.json_response(answer, headers={"Cache-Control": "no-store"})
        self.cookies.clear(response, self.cookies.session)
        return response

    async def jwks(self, request: web.Request) -> web.Response:
        return web.json_response({"keys": [public_jwk(await self.signing_key())]},
                                 headers={"Cache-Control": "max-age=300"})


async def _json_body(request: web.Request) -> dict[str, Any] | None:
    if request.content_length is not None and request.content_length > MAX_BODY:
        return None
    raw = await read_at_most(request.content, MAX_BODY)
    if len(raw) > MAX_BODY:
        return None
    try:
        value = parse_json(raw)  # bounded nesting, and a lone surrogate is refused, not passed on
    except JsonBodyError:
        return None
    return value if isinstance(value, dict) else None
