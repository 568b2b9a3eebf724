"""The OIDC relying party: the authorization code flow, from the redirect to verified claims.

`begin` makes the provider's authorization URL, its state and what the callback needs of the
request (`OidcRequest`: nonce, PKCE verifier, redirect URI); `finish` exchanges the code and runs
every check of docs/connectors.md on what comes back, merging UserInfo under the ID token's claims.
The request is the caller's to keep in its pending sign-in (bot/auth/pending.py) under the state
and to take back once (single use).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp

from bot.auth.connectors import OidcSettings
from bot.auth.errors import SignInError
from bot.auth.oidc.provider import MAX_DOCUMENT, ProviderCache, allowed_endpoint
from bot.auth.oidc.token import Expected, UnknownKey, verify_id_token
from bot.auth.pending import OidcRequest
from bot.auth.redirects import choose_redirect_url
from bot.auth.service_keys import sign_request_object
from bot.documents.bounded_read import read_at_most

STATE_SECONDS = 600  # a sign-in started is finished within 10 minutes, or started again
REQUEST_OBJECT_SECONDS = 300


@dataclass(frozen=True)
class Started:
    url: str
    state: str
    request: OidcRequest


@dataclass(frozen=True)
class Identity:
    username: str
    claims: dict[str, Any]


def _pkce_challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


async def begin(connector: OidcSettings, provider: ProviderCache, *, public_url: str | None,
                signing_key: Any = None, now: float | None = None) -> Started:
    """The authorization URL to send the browser to; `signing_key()` gives the service key's PEM."""
    metadata = await provider.metadata(connector.issuer)
    state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    redirect_uri = choose_redirect_url(connector.redirect_urls, public_url)
    params: dict[str, str] = {"response_type": "code", "client_id": connector.client_id,
                              "redirect_uri": redirect_uri, "scope": " ".join(connector.scopes),
                              "state": state, "nonce": nonce}
    verifier = secrets.token_urlsafe(48) if connector.pkce else None
    if verifier:
        params.update(code_challenge=_pkce_challenge(verifier), code_challenge_method="S256")
    if connector.prompt:
        params["prompt"] = connector.prompt
    if connector.max_age is not None:
        params["max_age"] = str(connector.max_age)
    if connector.acr_values:
        params["acr_values"] = " ".join(connector.acr_values)
    if connector.signed_request:
        params = await _request_object(connector, metadata, params, signing_key, now or time.time())
    request = OidcRequest(nonce, verifier, redirect_uri)
    return Started(metadata["authorization_endpoint"] + "?" + urlencode(params), state, request)


async def _request_object(connector: OidcSettings, metadata: dict[str, Any], params: dict[str, str],
                          signing_key: Any, now: float) -> dict[str, str]:
    """Every parameter inside a JWT signed with the service key (RFC 9101); the query keeps only
    what OAuth requires outside it."""
    if metadata.get("request_parameter_supported") is not True:
        raise SignInError("request-object", f"connector `{connector.name}` sets request_object_mode: signed, but "
                                            "the provider's discovery document does not say "
                                            "request_parameter_supported: true", status=502)
    claims = {**params, "iss": connector.client_id, "aud": metadata["issuer"], "iat": int(now),
              "exp": int(now) + REQUEST_OBJECT_SECONDS, "jti": secrets.token_urlsafe(16)}
    request = sign_request_object(await signing_key(), claims)
    return {"response_type": "code", "client_id": connector.client_id, "scope": params["scope"], "request": request}


async def finish(connector: OidcSettings, provider: ProviderCache, request: OidcRequest, code: str,
                 now: float | None = None) -> Identity:
    """Exchange the code, verify the ID token, merge UserInfo; SignInError names a failed check."""
    metadata = await provider.metadata(connector.issuer)
    tokens = await _exchange(connector, provider, metadata, request, code)
    raw = tokens.get("id_token")
    if not isinstance(raw, str):
        raise SignInError("id-token", "the provider's token answer has no ID token (is `openid` a scope the "
                                      "client may request?)")
    expected = Expected(metadata["issuer"], connector.client_id, request.nonce, now or time.time(),
                        connector.max_age, connector.acr_values)
    claims = await _verified(raw, provider, metadata["jwks_uri"], expected)
    access_token = tokens.get("access_token")
    if isinstance(access_token, str) and allowed_endpoint(metadata.get("userinfo_endpoint")):
        claims = await _merge_userinfo(provider.http, metadata["userinfo_endpoint"], access_token, claims)
    return Identity(username_of(connector, claims), claims)


async def _verified(raw: str, provider: ProviderCache, jwks_uri: str, expected: Expected) -> dict[str, Any]:
    keys = await provider.key_set(jwks_uri)
    try:
        return verify_id_token(raw, keys.document, expected)
    except UnknownKey:  # the provider may have rotated its keys: look once more, in a set fetched since
        return verify_id_token(raw, (await provider.newer_key_set(jwks_uri, keys)).document, expected)


async def _exchange(connector: OidcSettings, provider: ProviderCache, metadata: dict[str, Any],
                    request: OidcRequest, code: str) -> dict[str, Any]:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": request.redirect_uri}
    if request.verifier:
        form["code_verifier"] = request.verifier
    methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    headers = {"Accept": "application/json"}
    if "client_secret_basic" not in methods and "client_secret_post" in methods:
        form.update(client_id=connector.client_id, client_secret=connector.client_secret)
    else:
        pair = f"{_form_escape(connector.client_id)}:{_form_escape(connector.client_secret)}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    return await provider.fetch_json(metadata["token_endpoint"], "token-exchange", data=form, headers=headers)


def _form_escape(value: str) -> str:
    """RFC 6749 2.3.1: the id and secret are form-urlencoded before Basic encoding."""
    return urlencode({"": value})[1:]


async def _merge_userinfo(http: aiohttp.ClientSession, url: str, access_token: str,
                          claims: dict[str, Any]) -> dict[str, Any]:
    """UserInfo under the token's claims; a 4xx or an unreadable answer leaves the token's alone,
    a different `sub` refuses the sign-in (docs/connectors.md, as Teleport does). Read only from an https
    endpoint, or http on a loopback host (a provider on this machine, like its issuer)."""
    try:
        async with http.get(url, headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json"},
                            timeout=aiohttp.ClientTimeout(total=15), allow_redirects=False) as response:
            if response.status != 200 or response.content_type != "application/json":
                return claims
            body = await read_at_most(response.content, MAX_DOCUMENT)
        info = json.loads(body) if len(body) <= MAX_DOCUMENT else None
    except (aiohttp.ClientError, TimeoutError, ValueError, RecursionError):
        return claims
    if not isinstance(info, dict):
        return claims
    if info.get("sub") != claims.get("sub"):
        raise SignInError("userinfo-sub", "the provider's UserInfo answer is about another subject (`sub` differs "
                                          "from the ID token's)")
    return {**info, **claims}


def username_of(connector: OidcSettings, claims: dict[str, Any]) -> str:
    verified = claims.get("email_verified")
    if (verified is False or verified == "false") and not connector.allow_unverified_email:
        raise SignInError("email-verified", "the provider says the email address is not verified "
                                            "(email_verified: false); verify it there, or set "
                                            "allow_unverified_email on the connector")
    username = claims.get(connector.username_claim)
    if not isinstance(username, str) or not username.strip():
        raise SignInError("username", f"the claim `{connector.username_claim}` (the connector's username_claim) "
                                      "is missing or is not a non-empty string")
    return username
