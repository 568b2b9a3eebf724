"""The SAML sign-in routes (docs/connectors.md "Signing in"), beside the OIDC ones:

    GET  /v1/webapi/saml/sso?connector_id=N&redirect_url=P   the AuthnRequest (302, or a POST form)
    POST /v1/webapi/saml/acs[/{name}]                          the assertion consumer
    GET  /v1/webapi/saml/metadata/{name}                       the SP metadata to give the IdP
    POST /v1/webapi/saml/login/console                         terminal sign-in, as OIDC's
    GET  /v1/webapi/saml/mfa/web?connector_id=N&redirect_url=P an MFA round for the signed-in browser
    GET  /v1/webapi/saml/test/web?connector_id=N&redirect_url=P a test sign-in (connectors:write): no session kept
    POST /v1/webapi/saml/mfa/console                           the terminal's MFA round
    GET|POST /v1/webapi/saml/slo/{name}                        single logout (bot/server/signin/saml_logout.py)

The pending request is keyed by the AuthnRequest's ID, the `InResponseTo` of its answer, and taken
once. The browser is not bound by a cookie here as OIDC's is: the IdP's answer is a cross-site POST,
which a `SameSite=Lax` cookie does not follow; the single-use request id and the signed
`InResponseTo` carry that duty.

A test sign-in (the console's "Test sign-in") is a pending request with flow "test": its answer is
checked as a sign-in's is (signature, InResponseTo, replay, groups), and then only the attributes
and the roles they map to are kept for the console (`Callback.test_result`, shared with OIDC) — no
session, no single-logout entry, whatever the roles. A response without InResponseTo (IdP-initiated)
has no pending request, so it is never a test.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import time
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from bot.auth.connectors import connector_doc, secret_of
from bot.auth.directory.groups import with_saml_groups
from bot.auth.errors import SignInError
from bot.auth.guard import Denial
from bot.auth.outcomes import no_role_refusal
from bot.auth.pending import Flow, PendingSignIn, keep, take
from bot.auth.redirects import RedirectError, web_return_path
from bot.auth.roles import RoleResult, map_roles
from bot.auth.saml import protocol as saml
from bot.auth.saml.descriptor import DescriptorCache
from bot.auth.saml.settings import SamlSettings, saml_mfa_settings, saml_settings
from bot.auth.sessions import Session, create_session, find_session, mfa_session, token_key
from bot.auth.signin_log import record_signin, unmatched
from bot.connectors.kinds import SAML
from bot.server.signin import terminal
from bot.server.signin.answers import mfa_done, test_answer, to_client
from bot.server.signin.context import SignInContext
from bot.server.signin.pages import SECURITY_HEADERS, redirect, refusal_page
from bot.server.signin.saml_logout import LogoutRoutes

IDP_INITIATED_RETURN = "/console/"


def add_saml_routes(app: web.Application, flows: SamlRoutes) -> None:
    app.router.add_get("/v1/webapi/saml/sso", flows.sso)
    app.router.add_post("/v1/webapi/saml/acs", flows.acs)
    app.router.add_post("/v1/webapi/saml/acs/{name}", flows.acs)
    app.router.add_get("/v1/webapi/saml/metadata/{name}", flows.metadata)
    app.router.add_post("/v1/webapi/saml/login/console", flows.login_console)
    app.router.add_get("/v1/webapi/saml/mfa/web", flows.mfa_web)
    app.router.add_get("/v1/webapi/saml/test/web", flows.test_web)
    app.router.add_post("/v1/webapi/saml/mfa/console", flows.mfa_console)
    app.router.add_route("GET", "/v1/webapi/saml/slo/{name}", flows.logout.slo)
    app.router.add_route("POST", "/v1/webapi/saml/slo/{name}", flows.logout.slo)


async def saml_doc(context: SignInContext, name: Any) -> dict[str, Any]:
    """The SAML connector a sign-in names (refused by name when there is none)."""
    return await connector_doc(context.connector_store, SAML.kind, "SAML", name)


def _pending_key(request_id: str) -> str:
    return "saml:" + request_id


class SamlRoutes:
    def __init__(self, context: SignInContext) -> None:
        self.context = context
        self.descriptors = DescriptorCache(context.descriptors)  # shared with the resource API's reconcile
        self.logout = LogoutRoutes(context, self.settings)  # POST /v1/webapi/logout asks it for the IdP's URL

    async def settings(self, name: Any, *, mfa: bool = False) -> SamlSettings:
        doc = await saml_doc(self.context, name)
        doc = {**doc, "spec": await self.descriptors.fill(doc.get("spec") or {})}
        return saml_mfa_settings(doc, self.context.secrets) if mfa else saml_settings(doc, self.context.secrets)

    async def _start(self, settings: SamlSettings, pending: PendingSignIn, subject: str | None = None) -> saml.Started:
        started = await asyncio.to_thread(saml.begin, settings, "", subject)
        await keep(self.context.store, _pending_key(started.request_id), pending, time.time() + saml.REQUEST_SECONDS)
        return started

    async def sso(self, request: web.Request) -> web.Response:
        return await self._start_in_browser(request, "web", subject=request.query.get("username"))

    async def _start_in_browser(self, request: web.Request, flow: Flow, subject: str | None = None) -> web.Response:
        """The AuthnRequest of a browser's sign-in (`flow` "web") or test (`flow` "test"), back to
        `redirect_url`; a refusal is recorded in the sign-in log and shown as a page."""
        name = request.query.get("connector_id")
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            settings = await self.settings(name)
            started = await self._start(settings, PendingSignIn(settings.name, flow, return_to=return_to),
                                        subject=subject)
        except RedirectError as exc:
            return refusal_page(400, "redirect-url", str(exc))
        except SignInError as exc:
            await record_signin(self.context.store, str(name or "")[:253], None, exc, None, flow=flow, kind="saml",
                                unauthenticated=flow == "web" and unmatched(exc), ip=request.remote)
            return refusal_page(exc.status, exc.check, exc.message)
        return _send(started)

    async def mfa_web(self, request: web.Request) -> web.Response:
        name = request.query.get("connector_id")
        token = request.cookies.get(self.context.cookies.session, "")
        session = await find_session(self.context.store, token) if token else None
        try:
            return_to = web_return_path(request.query.get("redirect_url"))
            session = mfa_session(session, name, "sign in first")
            settings = await self.settings(name, mfa=True)
            started = await self._start(settings, PendingSignIn(settings.name, "mfa", return_to=return_to,
                                                                session=token_key(token), username=session.username),
                                        subject=session.username)
        except RedirectError as exc:
            return refusal_page(400, "redirect-url", str(exc))
        except SignInError as exc:
            await record_signin(self.context.store, str(name or "")[:253], session.username if session else None,
                                exc, None, flow="mfa", kind="saml", unauthenticated=session is None,
                                ip=request.remote)
            return refusal_page(exc.status, exc.check, exc.message)
        return _send(started)

    async def test_web(self, request: web.Request) -> web.Response:
        """The console's "test sign-in": the AuthnRequest of a sign-in, pending as flow "test"; the
        attributes and roles come back to `redirect_url` under `?test=ID`, and no session is made."""
        allowed = await self.context.gate.check(request, "connectors:write")
        if isinstance(allowed, Denial):
            return refusal_page(allowed.status, "permission", allowed.message)
        return await self._start_in_browser(request, "test")

    async def mfa_console(self, request: web.Request) -> web.Response:
        """The terminal's MFA round (`reviewer login --mfa`): its session as a bearer, its listener
        as `redirect_url`; the sealed answer carries `mfaVerifiedAt`."""
        async def start(settings: SamlSettings, pending: PendingSignIn) -> str:
            return (await self._start(settings, pending, subject=pending.username)).url
        return await terminal.mfa_console(self.context.store, request, lambda name: self.settings(name, mfa=True),
                                          start)

    async def login_console(self, request: web.Request) -> web.Response:
        async def start(settings: SamlSettings, pending: PendingSignIn) -> str:
            if settings.binding == "http-post":
                raise SignInError("binding", "terminal sign-in needs the HTTP-Redirect binding (a URL to open); "
                                             "this connector prefers http-post", status=400)
            return (await self._start(settings, pending)).url
        return await terminal.console_login(request, self.settings, start)

    async def metadata(self, request: web.Request) -> web.Response:
        try:
            settings = await self.settings(request.match_info["name"])
        except SignInError as exc:
            return refusal_page(exc.status, exc.check, exc.message)
        text = await asyncio.to_thread(saml.metadata, settings)
        return web.Response(text=text, content_type="application/samlmetadata+xml",
                            headers={"Cache-Control": "max-age=300"})

    async def acs(self, request: web.Request) -> web.StreamResponse:
        path_name = request.match_info.get("name")
        form = await request.post()
        posted = form.get("SAMLResponse")
        pending: PendingSignIn | None = None
        try:
            xml = saml.decode_response(posted if isinstance(posted, str) else "")
            request_id = saml.in_response_to(xml)
            pending = await self._pending(request_id, path_name)
            return await self._complete(xml, request_id, pending)
        except SignInError as error:
            flow = pending.flow if pending else "web"
            connector = pending.connector if pending else path_name or ""
            await record_signin(self.context.store, connector, error.username, error, error.claim_names, flow=flow,
                                kind="saml", unauthenticated=pending is None and unmatched(error),
                                ip=request.remote)
            if pending and pending.client is not None:
                return to_client(pending.client, {"error": {"check": error.check, "message": error.message}})
            return refusal_page(error.status, error.check, error.message, claim_names=error.claim_names,
                                hint=error.hint)

    async def _pending(self, request_id: str | None, path_name: str | None) -> PendingSignIn:
        if request_id is None:
            if not path_name:
                raise SignInError("idp-initiated", "a response without InResponseTo must be posted to "
                                                   "/v1/webapi/saml/acs/{connector name}", status=400)
            settings = await self.settings(path_name)
            if not settings.allow_idp_initiated:
                raise SignInError("idp-initiated", f"connector `{path_name}` does not accept IdP-initiated sign-in "
                                                   "(allow_idp_initiated is not true): start at the login page")
            return PendingSignIn(path_name, "web", return_to=IDP_INITIATED_RETURN)
        pending = await take(self.context.store, _pending_key(request_id))
        if pending is None:
            raise SignInError("saml-in-response-to", "InResponseTo names no pending request: unknown, already used "
                                                     "or older than 10 minutes; start the sign-in again")
        if path_name and pending.connector != path_name:
            raise SignInError("saml-in-response-to", "the response was posted to another connector's acs than the "
                                                     "one its request was made for")
        return pending

    async def _complete(self, xml: bytes, request_id: str | None, pending: PendingSignIn) -> web.StreamResponse:
        settings = await self.settings(pending.connector, mfa=pending.flow == "mfa")
        identity = await asyncio.to_thread(saml.verify, settings, xml, request_id)
        names = sorted(identity.attributes)
        replay_key = f"saml-assertion:{settings.name}:{identity.assertion_id}"
        if not await self.context.store.use_once(replay_key, identity.assertion_expires + saml.SKEW_SECONDS):
            raise SignInError("saml-replay", "this assertion was already used to sign in; start the sign-in again",
                              username=identity.username, claim_names=names)
        if pending.flow == "mfa":
            return await self._complete_mfa(settings, identity.username, names, pending)
        attributes = await self._groups(settings, identity.attributes, identity.username)
        mapped = map_roles(settings.attributes_to_roles, attributes)
        defined = [r for r in mapped.roles if r in self.context.gate.access().roles]
        if pending.flow == "test":  # only a pending request of ours is a test: never an IdP-initiated one
            return await test_answer(self.context.store, pending, identity.username, attributes,
                                     sorted(attributes), mapped, defined, kind="saml")
        return await self._sign_in(settings, identity.username, sorted(attributes), mapped, defined, pending,
                                   identity.session_index)

    async def _groups(self, settings: SamlSettings, attributes: dict[str, list[str]],
                      username: str) -> dict[str, list[str]]:
        """Groups from Graph when the assertion carries `groups.link` (directory_id_groups_provider,
        read with the connector's settings); the `credentials.oauth` secret is read at use."""
        doc = await saml_doc(self.context, settings.name)
        try:
            secret = secret_of(doc, "/spec/credentials/oauth/client_secret", self.context.secrets,
                               "credentials.oauth client secret")
            return await with_saml_groups(self.context.provider.http, settings.groups, settings.oauth_client_id,
                                          secret, attributes, self.context.directory_url)
        except SignInError as error:
            error.username, error.claim_names = username, sorted(attributes)
            raise

    async def _sign_in(self, settings: SamlSettings, username: str, names: list[str], mapped: RoleResult,
                       defined: list[str], pending: PendingSignIn, session_index: str | None) -> web.StreamResponse:
        context = self.context
        if not defined:
            raise no_role_refusal(username, names, mapped.roles, mapped.warnings,
                                  [m.claim for m in settings.attributes_to_roles])
        now = time.time()
        session = Session(username, settings.name, defined, now, now + context.session_ttl)
        token = await create_session(context.store, session)
        await context.store.put_sso_index(token_key(token), settings.name, username,
                                          {"connector": settings.name, "name_id": username,
                                           "session_index": session_index}, session.expires)
        await record_signin(context.store, settings.name, username, None, names, flow=pending.flow, roles=defined,
                            warnings=mapped.warnings, kind="saml")
        if pending.flow == "console":
            return to_client(pending.terminal(), {"token": token, "username": username, "roles": defined,
                                                  "expires": session.expires_rfc3339()})
        response = redirect(pending.return_to)
        context.cookies.set(response, context.cookies.session, token, context.session_ttl)
        return response

    async def _complete_mfa(self, settings: SamlSettings, username: str, names: list[str],
                            pending: PendingSignIn) -> web.StreamResponse:
        store = self.context.store
        if username != pending.username:
            raise SignInError("mfa-user", "the MFA check came back as another user than the one signed in; sign in "
                                          "at the identity provider as that user", username=username, claim_names=names)
        record = await store.get_session(pending.session)
        if record is None:
            raise SignInError("session", "the session ended during the MFA check: sign in again", status=401)
        record["mfa_verified_at"] = time.time()
        await store.put_session(pending.session, record, record["expires"])
        await record_signin(store, settings.name, username, None, names, flow="mfa", roles=record["roles"],
                            kind="saml")
        return mfa_done(pending, username, record["mfa_verified_at"])


_SUBMIT = "document.forms[0].submit();"
_SUBMIT_HASH = base64.b64encode(hashlib.sha256(_SUBMIT.encode()).digest()).decode()


def _send(started: saml.Started) -> web.Response:
    """A 302 for HTTP-Redirect; for HTTP-POST a form that submits itself (its script allowed by hash,
    the form allowed to post to the IdP's origin only)."""
    if started.method == "GET":
        return redirect(started.url)
    inputs = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                     for k, v in started.fields.items())
    parts = urlsplit(started.url)
    body = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Signing in</title></head><body>"
            f"<form method=\"post\" action=\"{html.escape(started.url)}\">{inputs}"
            "<noscript><button type=\"submit\">Continue to the identity provider</button></noscript></form>"
            f"<script>{_SUBMIT}</script></body></html>")
    policy = (f"default-src 'none'; script-src 'sha256-{_SUBMIT_HASH}'; "
              f"form-action {parts.scheme}://{parts.netloc}; frame-ancestors 'none'")
    return web.Response(text=body, content_type="text/html", charset="utf-8",
                        headers={**SECURITY_HEADERS, "Content-Security-Policy": policy})
