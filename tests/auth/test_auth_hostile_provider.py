"""What a real provider never sends, from a provider of our own over HTTP: each is refused, names
the check that failed, leaves no session, and is recorded in the sign-in log."""

from __future__ import annotations

import asyncio
import json
import time
from contextlib import asynccontextmanager
from urllib.parse import quote

import jwt
import pytest

from bot.server.signin.routes import SIGNIN_STORE
from tests.support.oidc_support import (
    CLIENT_ID,
    CLIENT_SECRET,
    Browser,
    HostileProvider,
    connector_doc,
    new_rsa,
    put_connector,
    query_of,
    signin_server,
)

NOW = int(time.time())


@asynccontextmanager
async def world(tmp_path, provider: HostileProvider, **spec):
    async with provider.serving(), signin_server(tmp_path) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url, **spec))
        browser = Browser()
        try:
            yield server, browser
        finally:
            await browser.close()


async def sign_in(server, browser: Browser, redirect: str = "/console/") -> tuple[int, str, str]:
    return await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=idp&redirect_url={quote(redirect)}")


async def assert_refused(server, browser: Browser, status: int, body: str, check: str) -> None:
    assert status in (400, 403, 502), body
    assert f"<code>{check}</code>" in body, body
    assert browser.cookie("reviewer_session") is None
    async with browser.http.get(server.url + "/v1/webapi/session") as response:
        assert response.status == 401
    entry = (await server.app[SIGNIN_STORE].signins())[0]
    assert entry["ok"] is False and entry["check"] == check


HOSTILE = [
    pytest.param({"claims": {"iss": "https://evil.example"}}, {}, "iss", id="wrong-iss"),
    pytest.param({"claims": {"aud": "another-client"}}, {}, "aud", id="wrong-aud"),
    pytest.param({"claims": {"aud": [CLIENT_ID, "other"], "azp": "other"}}, {}, "azp", id="wrong-azp"),
    pytest.param({"claims": {"aud": [CLIENT_ID, "other"]}}, {}, "azp", id="many-audiences-no-azp"),
    pytest.param({"claims": {"exp": NOW - 600, "iat": NOW - 900}}, {}, "exp", id="expired"),
    pytest.param({"claims": {"iat": NOW + 3600, "exp": NOW + 7200}}, {}, "iat", id="issued-in-future"),
    pytest.param({"mode": "alg-none"}, {}, "alg", id="alg-none"),
    pytest.param({"mode": "hs256-public"}, {}, "alg", id="hs256-signed-with-public-key"),
    pytest.param({"header": {"kid": "unknown-kid"}}, {}, "kid", id="unknown-kid"),
    pytest.param({"mode": "foreign-key"}, {}, "signature", id="foreign-key"),
    pytest.param({"drop": ("nonce",)}, {}, "nonce", id="missing-nonce"),
    pytest.param({"claims": {"nonce": "not-the-one-sent"}}, {}, "nonce", id="wrong-nonce"),
    pytest.param({"claims": {"email_verified": False}}, {}, "email-verified", id="email-unverified"),
    pytest.param({"drop": ("auth_time",)}, {"max_age": "1h"}, "auth-time", id="max-age-without-auth-time"),
    pytest.param({"claims": {"auth_time": NOW - 7200}}, {"max_age": "1h"}, "auth-time", id="auth-time-too-old"),
    pytest.param({"claims": {"acr": "bronze"}}, {"acr_values": "gold silver"}, "acr", id="acr-outside-values"),
    pytest.param({"userinfo": {"sub": "someone-else", "email": "mallory@example.com"}}, {}, "userinfo-sub",
                 id="userinfo-sub-differs"),
    pytest.param({}, {"username_claim": "preferred_username"}, "username", id="username-claim-missing"),
    pytest.param({"claims": {"groups": ["Admins"]}}, {}, "no-roles", id="case-only-role-match"),
    pytest.param({"discovery_extra": {"issuer": "https://evil.example"}}, {}, "discovery", id="discovery-issuer"),
    pytest.param({"discovery_extra": {"token_endpoint": "http://tokens.example.com/token"}}, {}, "discovery",
                 id="plain-http-token-endpoint"),
]


@pytest.mark.parametrize(("shape", "spec", "check"), HOSTILE)
async def test_a_hostile_token_is_refused_without_a_session(tmp_path, shape, spec, check):
    provider = HostileProvider(**shape)
    async with world(tmp_path, provider, **spec) as (server, browser):
        status, _, body = await sign_in(server, browser)
        await assert_refused(server, browser, status, body, check)



async def test_a_rotated_key_is_found_by_one_refresh(tmp_path):
    provider = HostileProvider()
    async with world(tmp_path, provider) as (server, browser):
        await sign_in(server, browser)
        assert browser.cookie("reviewer_session") and provider.jwks_fetches == 1
        provider.key, provider.kid = new_rsa("rotated"), "key-2"  # the provider rotates its signing key
        second = Browser()  # at once: the server itself waits out its refresh gap, then fetches once
        try:
            await sign_in(server, second)
            assert second.cookie("reviewer_session") and provider.jwks_fetches == 2
        finally:
            await second.close()


async def test_a_key_rotated_right_after_a_forged_kid_is_found(tmp_path):
    """A forged `kid` has just made us refresh the key set; the provider then rotates its key. The
    sign-ins that follow within the second wait out the refresh gap and share one fetch, rather
    than being refused as `kid` (three in a row were, after such an attempt)."""
    provider = HostileProvider(header={"kid": "forged-kid"})
    async with world(tmp_path, provider) as (server, browser):
        status, _, body = await sign_in(server, browser)
        await assert_refused(server, browser, status, body, "kid")
        provider.header = {}
        provider.key, provider.kid = new_rsa("rotated"), "key-2"  # rotated in just after the forged attempt
        fetched = provider.jwks_fetches
        browsers = [Browser() for _ in range(3)]
        try:
            await asyncio.gather(*(sign_in(server, each) for each in browsers))
            assert all(each.cookie("reviewer_session") for each in browsers)
        finally:
            for each in browsers:
                await each.close()
        assert provider.jwks_fetches == fetched + 1  # the three waited on one refresh
    _assert_at_most_one_fetch_a_second(provider)


async def test_forged_kids_never_fetch_the_key_set_more_than_once_a_second(tmp_path):
    """Hostile: sign-ins with forged `kid`s, at once and one after another: every one is refused,
    the ones at once share one refresh, and no two fetches of the key set are under a second apart."""
    provider = HostileProvider(header={"kid": "forged-kid"})
    async with world(tmp_path, provider) as (server, browser):
        status, _, body = await sign_in(server, browser)  # the first fetch, then one refresh
        await assert_refused(server, browser, status, body, "kid")
        assert provider.jwks_fetches == 2
        browsers = [Browser() for _ in range(5)]
        try:
            answers = await asyncio.gather(*(sign_in(server, each) for each in browsers))
            for each, (status, _, body) in zip(browsers, answers, strict=True):
                assert status == 403 and "<code>kid</code>" in body and each.cookie("reviewer_session") is None
        finally:
            for each in browsers:
                await each.close()
        # Five forgeries at once share refreshes: usually one, two when one of them reads the key set
        # only after the shared refresh ended (a loaded machine); never one each.
        assert 3 <= provider.jwks_fetches < 2 + 5
        for _ in range(2):  # one after another: one refresh each, each a second after the last
            fetched = provider.jwks_fetches
            status, _, body = await sign_in(server, browser)
            assert status == 403 and "<code>kid</code>" in body
            assert provider.jwks_fetches == fetched + 1
    _assert_at_most_one_fetch_a_second(provider)


def _assert_at_most_one_fetch_a_second(provider: HostileProvider) -> None:
    times = provider.jwks_times
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    assert all(gap >= 1.0 for gap in gaps), gaps


async def test_a_good_token_signs_in_and_userinfo_never_overrides(tmp_path):
    provider = HostileProvider(userinfo={"sub": "user-1", "email": "mallory@example.com", "team": "blue"})
    async with world(tmp_path, provider, claims_to_roles=[
            {"claim": "team", "value": "blue", "roles": ["viewer"]},
            {"claim": "groups", "value": "admins", "roles": ["admin"]}]) as (server, browser):
        status, url, _ = await sign_in(server, browser, "/console/deliveries?x=1")
        assert url == server.url + "/console/deliveries?x=1"
        async with browser.http.get(server.url + "/v1/webapi/session") as response:
            session = await response.json()
        assert session["username"] == "alice@example.com"  # the token's email, not UserInfo's
        assert session["roles"] == ["viewer", "admin"]  # `team` came from UserInfo
        verifier = provider.token_forms[0]["code_verifier"]
        assert provider.authorize_params[0]["code_challenge_method"] == "S256" and verifier
        entry = (await server.app[SIGNIN_STORE].signins())[0]
        assert entry["ok"] and entry["roles"] == ["viewer", "admin"] and "team" in entry["claims"]
        assert "alice" not in json.dumps(entry["claims"]) and "blue" not in json.dumps(entry)


async def test_unverified_email_is_accepted_when_the_connector_allows_it(tmp_path):
    provider = HostileProvider(claims={"email_verified": False})
    async with world(tmp_path, provider, allow_unverified_email=True) as (server, browser):
        await sign_in(server, browser)
        assert browser.cookie("reviewer_session")


async def test_login_parameters_follow_the_connector(tmp_path):
    provider = HostileProvider(claims={"acr": "gold"})
    async with world(tmp_path, provider, prompt="", max_age="30m", acr_values="gold silver",
                     pkce_mode="disabled", scope=["groups", "openid"]) as (server, browser):
        await sign_in(server, browser)
        sent = provider.authorize_params[0]
        assert "prompt" not in sent and "code_challenge" not in sent
        assert sent["max_age"] == "1800" and sent["acr_values"] == "gold silver"
        assert sent["scope"] == "openid email groups"
        assert "code_verifier" not in provider.token_forms[0]
        async with browser.http.get(server.url + "/v1/webapi/session") as response:
            expires = (await response.json())["expires"]
        assert time.mktime(time.strptime(expires, "%Y-%m-%dT%H:%M:%SZ")) - time.mktime(time.gmtime()) <= 1800 + 5


async def test_a_signed_request_object_carries_the_parameters(tmp_path):
    provider = HostileProvider(discovery_extra={"request_parameter_supported": True})
    async with world(tmp_path, provider, request_object_mode="signed") as (server, browser):
        await sign_in(server, browser)
        assert browser.cookie("reviewer_session")
        sent = provider.authorize_params[0]
        assert set(sent) == {"response_type", "client_id", "scope", "request"}
        async with server.http.get(server.url + "/.well-known/jwks.json") as response:
            keys = (await response.json())["keys"]
        assert all("d" not in key for key in keys)  # the public half only
        key = jwt.PyJWK(keys[0]).key
        inside = jwt.decode(sent["request"], key, algorithms=["RS256"], audience=provider.url)
        assert inside["iss"] == CLIENT_ID and inside["nonce"] and inside["state"] and inside["code_challenge"]


async def test_request_objects_need_the_providers_support(tmp_path):
    provider = HostileProvider()
    async with world(tmp_path, provider, request_object_mode="signed") as (server, browser):
        status, _, body = await sign_in(server, browser)
        assert status == 502 and "<code>request-object</code>" in body and not provider.authorize_params


async def test_state_is_single_use_and_bound_to_the_browser(tmp_path):
    provider = HostileProvider()
    async with world(tmp_path, provider) as (server, browser):
        await sign_in(server, browser)
        callback = next(h for h in browser.hops if "/oidc/callback" in h)
        assert browser.cookie("reviewer_session")
        status, _, body = await browser.get(callback)  # replayed
        assert status == 400 and "<code>state</code>" in body

        async with server.http.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=idp",
                                   allow_redirects=False) as response:
            authorize = response.headers["Location"]  # started by another browser (this client keeps no cookie)
        state = query_of(authorize)["state"]
        other = Browser()
        try:
            status, _, body = await other.get(f"{server.url}/v1/webapi/oidc/callback?code=x&state={state}")
            assert status == 403 and "<code>state</code>" in body and other.cookie("reviewer_session") is None
        finally:
            await other.close()
        status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/callback?code=x&state=made-up")
        assert status == 400 and "<code>state</code>" in body


@pytest.mark.parametrize("target", ["//evil.example/", "https://evil.example/", "/\\evil.example", "/a b",
                                    "/console/\n", "javascript:alert(1)", "evil.example"])
async def test_open_redirects_are_refused_before_the_provider(tmp_path, target):
    provider = HostileProvider()
    async with world(tmp_path, provider) as (server, browser):
        status, url, body = await sign_in(server, browser, target)
        assert status == 400 and "<code>redirect-url</code>" in body
        assert not provider.authorize_params


async def test_a_provider_error_is_shown_and_recorded(tmp_path):
    provider = HostileProvider()
    async with world(tmp_path, provider) as (server, browser):
        async with browser.http.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=idp",
                                    allow_redirects=False) as response:
            state = query_of(response.headers["Location"])["state"]
        status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/callback?error=access_denied&state={state}")
        await assert_refused(server, browser, status, body, "provider-error")
        assert "access_denied" in body


async def test_the_client_authenticates_with_form_encoded_basic_credentials(tmp_path):
    secret = "s3cr:t/+% é"
    provider = HostileProvider(client_secret=secret)
    async with world(tmp_path, provider, client_secret=secret) as (server, browser):
        await sign_in(server, browser)
        assert browser.cookie("reviewer_session")
    provider = HostileProvider(client_secret="another-secret")
    async with world(tmp_path / "2", provider) as (server, browser):
        status, _, body = await sign_in(server, browser)
        await assert_refused(server, browser, status, body, "token-exchange")
        assert "invalid_client" in body and CLIENT_SECRET not in body
