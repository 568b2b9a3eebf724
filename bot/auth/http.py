"""The sign-in routes (design.md "Signing in through the connectors"), at Teleport's web API paths:

    GET  /v1/webapi/connectors[?username=U]      connectors one may sign in with (identifier-first)
    GET  /v1/webapi/oidc/login/web               → 302 to the provider
    POST /v1/webapi/oidc/login/console           terminal sign-in: {"redirect_url": provider URL}
    GET  /v1/webapi/oidc/mfa/web                 an MFA round for the signed-in browser → 302
    GET  /v1/webapi/oidc/test/web                a test sign-in (connectors:write): no session kept
    GET  /v1/webapi/oidc/callback                the provider's redirect back
    GET  /v1/webapi/session                      who is signed in
    POST /v1/webapi/logout                       ends the session
    GET  /.well-known/jwks.json                  the service's public keys (request objects)

`setup_signin(app, …)` adds them and returns the `Gate` the resource and admin APIs check.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
from aiohttp import web

from bot.auth import oidc
from bot.auth.access import Access
from bot.auth.callback import Callback
from bot.auth.connectors import display_of, is_ready, mfa_settings, oidc_settings, user_matches
from bot.auth.errors import SignInError
from bot.auth.guard import Denial, Gate
from bot.auth.oidc_provider import ProviderCache
from bot.auth.pages import redirect, refusal_page
from bot.auth.redirects import RedirectError, check_client_redirect, web_return_path
from bot.auth.service_keys import KEY_NAME, make_private_pem, public_jwk
from bot.auth.sessions import BINDING_COOKIE, SESSION_COOKIE, find_session, rfc3339, token_key
from bot.auth.store import AuthStore
from bot.connectors.kinds import OIDC
from bot.secrets import SecretStore
from bot.store.model import ConnectorStore

log = logging.getLogger("reviewer.signin")
MAX_BODY = 16 * 1024
SIGNIN_STORE = web.AppKey("signin_store", AuthStore)  # the console's sign-in log reads it


def setup_signin(app: web.Application, *, connectors: ConnectorStore, store: AuthStore,
                 secrets_dir: str | None, public_url: str | None, session_ttl: int, admin_token: str | None,
                 access: Callable[[], Access]) -> Gate:
    """Adds the sign-in routes and their start/stop step; returns the APIs' gate."""
    app[SIGNIN_STORE] = store
    gate = Gate(admin_token=admin_token, store=store, access=access, public_url=public_url)
    routes = SignInRoutes(connectors, SecretStore(secrets_dir), store, gate, public_url, session_ttl)
    app.router.add_get("/v1/webapi/connectors", routes.connectors)
    app.router.add_get("/v1/webapi/oidc/login/web", routes.login_web)
    app.router.add_post("/v1/webapi/oidc/login/console", routes.login_console)
    app.router.add_get("/v1/webapi/oidc/mfa/web", routes.mfa_web)
    app.router.add_get("/v1/webapi/oidc/test/web", routes.test_web)
    app.router.add_get("/v1/webapi/oidc/callback", routes.callback.handle)
    app.router.add_get("/v1/webapi/session", routes.session)
    app.router.add_post("/v1/webapi/logout", routes.logout)
    app.router.add_get("/.well-known/jwks.json", routes.jwks)
    app.cleanup_ctx.append(routes.lifecycle)
    return gate


def json_error(status: int, check: str, message: str) -> web.Response:
    return web.json_response({"error": {"check": check, "message": message}}, status=status,
                             headers={"Cache-Control": "no-store"})


class SignInRoutes:
    def __init__(self, connectors: ConnectorStore, secrets: SecretStore, store: AuthStore, gate: Gate,
                 public_url: str | None, session_ttl: int) -> None:
        self.connector_store, self.secrets, self.store, self.gate = connectors, secrets, store, gate
        self.public_url, self.session_ttl = public_url, session_ttl
        self.provider: ProviderCache | None = None
        self.callback = Callback(self)

    async def lifecycle(self, app: web.Application) -> AsyncIterator[None]:
        await self.store.open()
        async with aiohttp.ClientSession() as http:
            self.provider = ProviderCache(http)
            try:
                yield
            finally:
                await self.store.close()

    @property
    def secure_cookies(self) -> bool:
        return bool(self.public_url and self.public_url.startswith("https://"))

    async def signing_key(self) -> str:
        return await self.store.key(KEY_NAME, make_private_pem)

    async def oidc_docs(self) -> list[dict[str, Any]]:
        items, _ = await self.connector_store.list(OIDC.kind)
        return [doc for doc in items if is_ready(doc)]

    async def connector_doc(self, name: Any) -> dict[str, Any]:
        if not isinstance(name, str) or not name:
            raise SignInError("connector", "connector_id is required: the name of an OIDC connector", status=400)
        doc = await self.connector_store.get(OIDC.kind, name)
        if doc is None:
            raise SignInError("connector", f"there is no OIDC connector named `{name[:100]}`", status=404)
        return doc

    async def settings_of(self, name: Any) -> oidc.OidcSettings:
        return oidc_settings(await self.connector_doc(name), self.secrets)

    async def connectors(self, request: web.Request) -> web.Response:
        username = request.query.get("username")
        docs = [d for d in await self.oidc_docs() if username is None or user_matches(d, username)]
        return web.json_response([{"name": d["metadata"]["name"], "kind": "oidc", "display": display_of(d)}
                                  for d in docs])

    async def _start(self, connector: oidc.OidcSettings, pending: dict[str, Any]) -> str:
        assert self.provider is not None
        started = await oidc.begin(connector, self.provider, public_url=self.public_url,
                                   signing_key=self.signing_key)
        await self.store.put_pending(token_key(started.state), {**started.pending, **pending},
                                     time.time() + oidc.STATE_SECONDS)
        return started.url

    async def login_web(self, request: web.Request) -> web.Response:
        name = request.query.get("connector_id")
        binding = _binding(request)
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
        token = request.cookies.get(SESSION_COOKIE, "")
        session = await find_session(self.store, token) if token else None
        binding = _binding(request)
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            if session is None:
                raise SignInError("session", "sign in first: an MFA check is for a signed-in user", status=401)
            if name != session.connector:
                raise SignInError("mfa", f"an MFA check goes through the connector you signed in with "
                                         f"(`{session.connector}`)", status=400)
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

    async def test_web(self, request: web.Request) -> web.Response:
        """The console's "test sign-in": the flow runs, and the claims and roles come back to
        `redirect_url` under `?test=ID` (see `take_test_result`); no session is made."""
        allowed = await self.gate.check(request, "connectors:write")
        if isinstance(allowed, Denial):
            return refusal_page(allowed.status, "permission", allowed.message)
        name = request.query.get("connector_id")
        binding = _binding(request)
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
        response.set_cookie(BINDING_COOKIE, binding, max_age=oidc.STATE_SECONDS, path="/v1/webapi/oidc/",
                            httponly=True, samesite="Lax", secure=self.secure_cookies)
        return response

    async def login_console(self, request: web.Request) -> web.Response:
        body = await _json_body(request)
        if body is None:
            return json_error(400, "request", 'the body must be a JSON object {"connector_id", "redirect_url"}')
        try:
            connector = await self.settings_of(body.get("connector_id"))
            client = check_client_redirect(body.get("redirect_url") or "",
                                           allowed_https_hostnames=connector.allowed_https_hostnames,
                                           insecure_allowed_cidr_ranges=connector.insecure_allowed_cidr_ranges)
            url = await self._start(connector, {"flow": "console", "client_url": client.url,
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
        cookie = request.cookies.get(SESSION_COOKIE)
        scheme, _, bearer = request.headers.get("Authorization", "").partition(" ")
        token = bearer.strip() if scheme.lower() == "bearer" and bearer.strip() else cookie
        if token == cookie and cookie and not self.gate.same_origin(request):
            return json_error(403, "origin", "logging out with the session cookie must come from this server's "
                                             "own pages")
        if token:
            await self.store.delete_session(token_key(token))
        response = web.json_response({"signedOut": True}, headers={"Cache-Control": "no-store"})
        response.del_cookie(SESSION_COOKIE, path="/")
        return response

    async def jwks(self, request: web.Request) -> web.Response:
        return web.json_response({"keys": [public_jwk(await self.signing_key())]},
                                 headers={"Cache-Control": "max-age=300"})


async def take_test_result(store: AuthStore, result_id: str) -> dict[str, Any] | None:
    """A test sign-in's result, once (None: unknown, already shown or older than ten minutes)."""
    if not result_id or len(result_id) > 64:
        return None
    return await store.take_pending(token_key("test-result:" + result_id))


def _binding(request: web.Request) -> str:
    """The browser's binding value: the one it holds (several tabs may sign in at once), else new."""
    binding = request.cookies.get(BINDING_COOKIE) or ""
    return binding if len(binding) == 43 else secrets.token_urlsafe(32)


async def _json_body(request: web.Request) -> dict[str, Any] | None:
    if request.content_length is not None and request.content_length > MAX_BODY:
        return None
    raw = await request.content.read(MAX_BODY + 1)
    if len(raw) > MAX_BODY:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
