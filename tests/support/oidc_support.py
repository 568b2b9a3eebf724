"""Identity providers for the sign-in tests, served over real HTTP on 127.0.0.1, and a browser.

- `real_provider()`: oidc-provider-mock (Authlib + Flask), a real OpenID provider: discovery,
  authorize (a form where the user picks a subject), token, JWKS, UserInfo.
- `HostileProvider`: a small provider of our own that answers the authorize step at once and
  sends, per test, what a real provider never would (wrong `iss`, `alg: none`, a foreign key...).
- `Browser`: a cookie jar that follows redirects by hand, so tests see every hop.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlencode, urlsplit

import aiohttp
import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.server_support import Recorder, Server, running_server

ADMIN_TOKEN = "break-glass-token-for-tests-0123456789abcdef"
CLIENT_ID = "reviewer-client"
CLIENT_SECRET = "client-secret-value-0123456789"


@contextmanager
def real_provider() -> Iterator[str]:
    """oidc-provider-mock on 127.0.0.1 in a thread; yields its issuer URL. Imported here, by the
    few tests that use it: Flask and Authlib's imports (0.3 CPU-s) were paid by every xdist
    worker, as some forty test modules import this one."""
    import oidc_provider_mock
    import werkzeug.serving

    server = werkzeug.serving.make_server("127.0.0.1", 0, oidc_provider_mock.app(require_nonce=True), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hand_signed(header: dict, claims: dict, hmac_key: bytes | None) -> str:
    """A token PyJWT refuses to make (HS256 keyed with a public key, or `alg: none`): built here,
    in the test's hostile provider only, because a real provider never sends one."""
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
    signature = b"" if hmac_key is None else hmac.new(hmac_key, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64(signature)


@functools.cache
def new_rsa(label: str = "provider") -> rsa.RSAPrivateKey:
    """An RSA key, one a label for the whole run: making one costs 0.1 to 0.4 s of CPU, and the
    hostile provider's tests made some forty. A test that needs keys to differ (a rotation, a
    forgery) names them differently."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class HostileProvider:
    """An OP whose ID token a test shapes: `claims` are merged over good ones, `header` over a good
    header; `mode` picks a forgery: "", "alg-none", "hs256-public", "foreign-key"."""

    claims: dict[str, Any] = field(default_factory=dict)
    drop: tuple[str, ...] = ()
    header: dict[str, Any] = field(default_factory=dict)
    mode: str = ""
    userinfo: dict[str, Any] | None = None
    discovery_extra: dict[str, Any] = field(default_factory=dict)
    key: rsa.RSAPrivateKey = field(default_factory=new_rsa)
    kid: str = "key-1"
    url: str = ""
    authorize_params: list[dict[str, str]] = field(default_factory=list)
    token_forms: list[dict[str, str]] = field(default_factory=list)
    jwks_fetches: int = 0
    jwks_times: list[float] = field(default_factory=list)  # time.monotonic() of each JWKS request
    client_secret: str = CLIENT_SECRET
    other_clients: dict[str, str] = field(default_factory=dict)  # client id → secret, beside CLIENT_ID's
    _codes: dict[str, dict[str, str]] = field(default_factory=dict)

    def public_pem(self) -> bytes:
        return self.key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo)

    async def discovery(self, request: web.Request) -> web.Response:
        return web.json_response({"issuer": self.url, "authorization_endpoint": self.url + "/authorize",
                                  "token_endpoint": self.url + "/token", "jwks_uri": self.url + "/jwks",
                                  "userinfo_endpoint": self.url + "/userinfo", **self.discovery_extra})

    async def jwks(self, request: web.Request) -> web.Response:
        self.jwks_fetches += 1
        self.jwks_times.append(time.monotonic())
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return web.json_response({"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": "RS256"}]})

    async def authorize(self, request: web.Request) -> web.Response:
        params = dict(request.query)
        self.authorize_params.append(params)
        if "request" in params:  # a request object: the test checks its signature itself
            params = {**params, **jwt.decode(params["request"], options={"verify_signature": False})}
        code = secrets.token_urlsafe(16)
        self._codes[code] = params
        target = params["redirect_uri"] + "?" + urlencode({"code": code, "state": params.get("state", "")})
        raise web.HTTPFound(target)

    async def token(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        self.token_forms.append(form)
        scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
        user, _, password = base64.b64decode(encoded or "").decode().partition(":")
        clients = {CLIENT_ID: self.client_secret, **self.other_clients}
        client, given = unquote_plus(user), unquote_plus(password)
        if scheme != "Basic" or client not in clients or clients[client] != given:
            return web.json_response({"error": "invalid_client"}, status=401)
        params = self._codes.pop(form.get("code", ""), None)
        if params is None:
            return web.json_response({"error": "invalid_grant"}, status=400)
        verifier = form.get("code_verifier")
        if "code_challenge" in params and (verifier is None or b64(hashlib.sha256(verifier.encode()).digest())
                                           != params["code_challenge"]):
            return web.json_response({"error": "invalid_grant", "error_description": "PKCE"}, status=400)
        return web.json_response({"access_token": "at-" + secrets.token_hex(8), "token_type": "Bearer",
                                  "id_token": self.id_token(params)})

    def id_token(self, params: dict[str, str]) -> str:
        now = int(time.time())
        claims = {"iss": self.url, "sub": "user-1", "aud": params.get("client_id", CLIENT_ID), "exp": now + 300,
                  "iat": now,
                  "auth_time": now, "nonce": params.get("nonce"), "email": "alice@example.com",
                  "email_verified": True, "groups": ["admins"], **self.claims}
        for name in self.drop:
            claims.pop(name, None)
        header = {"alg": "RS256", "typ": "JWT", "kid": self.kid, **self.header}
        if self.mode == "alg-none":
            return hand_signed({**header, "alg": "none"}, claims, None)
        if self.mode == "hs256-public":
            return hand_signed({**header, "alg": "HS256"}, claims, self.public_pem())
        key = new_rsa("foreign") if self.mode == "foreign-key" else self.key
        return jwt.encode(claims, key, algorithm=header.pop("alg"), headers=header)

    async def userinfo_page(self, request: web.Request) -> web.Response:
        if self.userinfo is None:
            return web.json_response({"error": "invalid_token"}, status=401)
        return web.json_response(self.userinfo)

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[HostileProvider]:
        app = web.Application()
        app.router.add_get("/.well-known/openid-configuration", self.discovery)
        app.router.add_get("/jwks", self.jwks)
        app.router.add_get("/authorize", self.authorize)
        app.router.add_post("/token", self.token)
        app.router.add_get("/userinfo", self.userinfo_page)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            yield self
        finally:
            await runner.cleanup()


class Browser:
    """A user agent: one cookie jar (IP hosts allowed), redirects followed one hop at a time."""

    def __init__(self) -> None:
        self.http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self.hops: list[str] = []

    async def close(self) -> None:
        await self.http.close()

    async def get(self, url: str, **kwargs: Any) -> tuple[int, str, str]:
        """GET, then follow redirects; returns (status, final URL, body)."""
        return await self.follow("GET", url, **kwargs)

    async def follow(self, method: str, url: str, limit: int = 10, **kwargs: Any) -> tuple[int, str, str]:
        for _ in range(limit):
            self.hops.append(url)
            async with self.http.request(method, url, allow_redirects=False, **kwargs) as response:
                body = await response.text()
                if response.status not in (301, 302, 303, 307) or "Location" not in response.headers:
                    return response.status, url, body
                url = str(response.url.join(aiohttp.client.URL(response.headers["Location"])))
            method, kwargs = "GET", {}
            if not url.startswith("http://127.0.0.1"):
                return 302, url, ""  # left this machine's servers (a client listener is no server here)
        raise AssertionError(f"too many redirects: {self.hops[-limit:]}")

    def cookie(self, name: str) -> str | None:
        for cookie in self.http.cookie_jar:
            if cookie.key == name:
                return cookie.value
        return None


@dataclass
class Remote:
    """A server reached over HTTP only (a `reviewer serve` process), for the helpers below."""

    url: str
    http: aiohttp.ClientSession


def connector_doc(name: str, issuer: str, server_url: str, **spec: Any) -> dict:
    body = {"issuer_url": issuer, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
            "redirect_url": [server_url + "/v1/webapi/oidc/callback"],
            "claims_to_roles": [{"claim": "groups", "value": "admins", "roles": ["admin"]}], **spec}
    return {"apiVersion": "resources.service.dev/v3", "kind": "ServiceOIDCConnector",
            "metadata": {"name": name}, "spec": body}


async def put_connector(server: Server | Remote, doc: dict) -> None:
    url = f"{server.url}/apis/resources.service.dev/v3/oidcconnectors/{doc['metadata']['name']}"
    async with server.http.put(url, json=doc, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
        body = await response.json()
        assert response.status in (200, 201), body
    ready = [c for c in body["status"]["conditions"] if c["type"] == "SuccessfullyReconciled"]
    assert ready[0]["status"] == "True", ready


@asynccontextmanager
async def signin_server(tmp_path: Path, admin_yaml: str | None = None, **extra: str) -> AsyncIterator[Server]:
    env = {"REVIEWER_ADMIN_TOKEN": ADMIN_TOKEN, **extra}
    if admin_yaml is not None:
        path = tmp_path / "admin.yaml"
        path.write_text(admin_yaml)
        env["REVIEWER_ADMIN_CONFIG"] = str(path)
    async with running_server(tmp_path, Recorder(), **env) as server:
        yield server


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}
