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

`setup_signin(app, …)` adds them and returns the `Gate` the resource and admin APIs check. Each
handler's object gets what it needs when it is made (bot/server/signin/context.py): the OIDC starts
(oidc_login.py), the callback (callback.py), the SAML endpoints (saml.py, saml_logout.py), and the
session endpoints (session_routes.py).
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from bot.auth.access import Access
from bot.auth.store import AuthStore
from bot.connectors.descriptor_fetch import DescriptorSource
from bot.connectors.field_checks import ConnectorSecrets
from bot.server.signin.callback import Callback
from bot.server.signin.context import SignInContext
from bot.server.signin.gate import Gate
from bot.server.signin.oidc_login import OidcLogin
from bot.server.signin.saml import SamlRoutes, add_saml_routes
from bot.server.signin.session_routes import SessionRoutes
from bot.store.model import ConnectorStore

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
    context = SignInContext(connectors, secrets, store, gate, public_url, session_ttl, descriptors, directory_url)
    oidc, callback, saml = OidcLogin(context), Callback(context), SamlRoutes(context)
    sessions = SessionRoutes(context, provider_logout=saml.logout.start)
    app.router.add_get("/v1/webapi/connectors", sessions.connectors)
    app.router.add_get("/v1/webapi/oidc/login/web", oidc.login_web)
    app.router.add_post("/v1/webapi/oidc/login/console", oidc.login_console)
    app.router.add_get("/v1/webapi/oidc/mfa/web", oidc.mfa_web)
    app.router.add_post("/v1/webapi/oidc/mfa/console", oidc.mfa_console)
    app.router.add_get("/v1/webapi/oidc/test/web", oidc.test_web)
    app.router.add_get("/v1/webapi/oidc/callback", callback.handle)
    app.router.add_get("/v1/webapi/session", sessions.session)
    app.router.add_post("/v1/webapi/logout", sessions.logout)
    app.router.add_get("/.well-known/jwks.json", sessions.jwks)
    add_saml_routes(app, saml)
    app.cleanup_ctx.append(lambda _: context.lifecycle())
    return gate
