"""MFA rounds through an OIDC connector's `mfa` client: a permission in `access.mfa.required`
answers MFARequired until the signed-in user passes a fresh check as the same user, through the
same connector; then `mfaVerifiedAt` is on the session and the write goes through."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

from bot.auth.sealing import unseal
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.oidc_support import Browser, HostileProvider, connector_doc, put_connector, query_of, signin_server

OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
ADMIN_YAML = """\
access:
  roles:
    admin: {allow: ["*"]}
  mfa:
    required: ["connectors:write"]
"""
MFA = {"enabled": True, "client_id": "mfa-client", "client_secret": "mfa-secret-value", "acr_values": "phr"}


@asynccontextmanager
async def signed_in(tmp_path, mfa: dict | None = None):
    provider = HostileProvider(other_clients={"mfa-client": "mfa-secret-value"})
    async with provider.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        spec = {"mfa": mfa} if mfa is not None else {}
        await put_connector(server, connector_doc("idp", provider.url, server.url, **spec))
        browser = Browser()
        try:
            await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=idp")
            assert browser.cookie("reviewer_session")
            yield server, browser, provider
        finally:
            await browser.close()


async def put_other(server, browser: Browser) -> tuple[int, dict]:
    doc = connector_doc("other", "https://idp.example.com", server.url)
    async with browser.http.put(server.url + OIDC_PATH + "/other", json=doc,
                                headers={"Origin": server.url}) as response:
        return response.status, await response.json()


async def session_of(server, browser: Browser) -> dict:
    async with browser.http.get(server.url + "/v1/webapi/session") as response:
        return await response.json()


async def test_an_mfa_round_unlocks_the_write(tmp_path):
    async with signed_in(tmp_path, MFA) as (server, browser, provider):
        status, body = await put_other(server, browser)
        assert status == 403 and body["reason"] == "MFARequired"
        status, url, _ = await browser.get(f"{server.url}/v1/webapi/oidc/mfa/web?connector_id=idp"
                                           "&redirect_url=/console/connectors")
        assert url == server.url + "/console/connectors"
        sent = provider.authorize_params[-1]
        assert (sent["client_id"], sent["max_age"], sent["acr_values"]) == ("mfa-client", "0", "phr")
        assert provider.token_forms[-1]  # the MFA client's own credentials were accepted
        session = await session_of(server, browser)
        assert session["mfaVerifiedAt"] and session["roles"] == ["admin"]
        status, _ = await put_other(server, browser)
        assert status == 201
        assert (await server.app[SIGNIN_STORE].signins())[0]["flow"] == "mfa"


async def test_an_mfa_round_as_another_user_is_refused(tmp_path):
    async with signed_in(tmp_path, MFA) as (server, browser, provider):
        provider.claims["email"] = "mallory@example.com"
        status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/mfa/web?connector_id=idp")
        assert status == 403 and "<code>mfa-user</code>" in body
        assert (await session_of(server, browser))["mfaVerifiedAt"] is None
        assert (await put_other(server, browser))[0] == 403


async def test_an_mfa_round_needs_a_fresh_authentication(tmp_path):
    async with signed_in(tmp_path, MFA) as (server, browser, provider):
        provider.claims["auth_time"] = int(time.time()) - 600  # the provider did not ask again
        status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/mfa/web?connector_id=idp")
        assert status == 403 and "<code>auth-time</code>" in body
        assert (await session_of(server, browser))["mfaVerifiedAt"] is None


async def test_an_mfa_round_needs_a_session_and_an_mfa_connector(tmp_path):
    async with signed_in(tmp_path) as (server, browser, provider):
        status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/mfa/web?connector_id=idp")
        assert status == 400 and "<code>mfa</code>" in body  # the connector has no mfa.enabled
        other = Browser()
        try:
            status, _, body = await other.get(f"{server.url}/v1/webapi/oidc/mfa/web?connector_id=idp")
            assert status == 401 and "<code>session</code>" in body
        finally:
            await other.close()
        rounds = len(provider.authorize_params)
        status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/mfa/web?connector_id=elsewhere")
        assert status == 400 and "`idp`" in body and len(provider.authorize_params) == rounds


async def test_a_terminal_session_passes_an_oidc_mfa_round(tmp_path):
    provider = HostileProvider(other_clients={"mfa-client": "mfa-secret-value"})
    key = bytes(range(32))
    client = f"http://localhost:9/callback?secret_key={key.hex()}"
    async with provider.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url, mfa=MFA))

        async def round_trip(path: str, headers: dict) -> dict:
            async with server.http.post(server.url + path, json={"connector_id": "idp", "redirect_url": client},
                                        headers=headers) as answer:
                assert answer.status == 200, await answer.text()
                url = (await answer.json())["redirect_url"]
            browser = Browser()
            try:
                status, landed, _ = await browser.get(url)  # no binding cookie: the terminal's round
            finally:
                await browser.close()
            assert landed.startswith("http://localhost:9/callback?response="), landed
            return unseal(key, query_of(landed)["response"])

        signed_in = await round_trip("/v1/webapi/oidc/login/console", {})
        bearer = {"Authorization": f"Bearer {signed_in['token']}"}
        doc = connector_doc("other", "https://idp.example.com", server.url)
        async with server.http.put(server.url + OIDC_PATH + "/other", json=doc, headers=bearer) as response:
            assert response.status == 403
        passed = await round_trip("/v1/webapi/oidc/mfa/console", bearer)
        assert passed["username"] == "alice@example.com" and passed["mfaVerifiedAt"]
        assert provider.authorize_params[-1]["client_id"] == "mfa-client"
        async with server.http.put(server.url + OIDC_PATH + "/other", json=doc, headers=bearer) as response:
            assert response.status == 201
