"""Signing in through a real SAML IdP (pysaml2's, signing with xmlsec1), over HTTP: the browser
flow, the terminal flow, the SP metadata, encrypted assertions and the request's shape."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from bot.auth.sealing import unseal
from bot.auth.sessions import token_key
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.oidc_support import ADMIN_TOKEN, Browser, query_of, signin_server
from tests.support.saml_support import (
    SAML_PATH,
    SamlIdP,
    decode,
    make_pair,
    post_response,
    put_saml,
    read_form,
    start,
)

ADMIN_YAML = """\
access:
  roles:
    admin: {allow: ["*"]}
    reader: {allow: ["connectors:read"]}
"""


pytestmark = pytest.mark.usefixtures("xmlsec")


async def test_a_browser_signs_in_through_saml(tmp_path, saml_idp):
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            status, url, _ = await post_response(browser, acs, response)
            assert url == server.url + "/console/repos"
            async with browser.http.get(server.url + "/v1/webapi/session") as answer:
                session = await answer.json()
        finally:
            await browser.close()
        assert session["username"] == "alice@example.com"
        assert session["connector"] == "corp" and session["roles"] == ["admin"]


async def _session(browser: Browser, server) -> dict:
    async with browser.http.get(server.url + "/v1/webapi/session") as answer:
        return await answer.json()


async def test_signed_post_binding_requests_and_encrypted_assertions(tmp_path):
    idp = SamlIdP(encrypt=True, want_signed_requests=True)
    sp = make_pair("reviewer sp")
    pair = {"cert": sp.cert_pem, "private_key": sp.key_pem}
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        doc = idp.connector("corp", server.url, preferred_request_binding="http-post", signing_key_pair=pair,
                            assertion_key_pair=pair, force_authn="yes", include_subject=True)
        await put_saml(server, doc, idp)
        assert sp.cert_pem.splitlines()[1] in idp.sp_metadata  # the metadata hands the IdP our certificate
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            assert "EncryptedAssertion" in decode(response) and "alice@example.com" not in decode(response)
            status, url, _ = await post_response(browser, acs, response)
            assert url == server.url + "/console/repos", (status, url)
            session = await _session(browser, server)
        finally:
            await browser.close()
    assert session["username"] == "alice@example.com"
    request = idp.requests[0]
    assert request.message.signature is not None  # enveloped: the IdP verified it through the metadata
    assert request.message.force_authn == "true"
    assert request.message.issuer.text == f"{server.url}/sp"
    assert request.message.assertion_consumer_service_url == f"{server.url}/v1/webapi/saml/acs/corp"


async def test_redirect_binding_signs_with_sigalg_and_omits_what_is_unset(tmp_path):
    idp = SamlIdP(want_signed_requests=True)  # the IdP checks SigAlg/Signature with our metadata's key
    sp = make_pair("reviewer sp")
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        doc = idp.connector("corp", server.url, signing_key_pair={"cert": sp.cert_pem, "private_key": sp.key_pem})
        await put_saml(server, doc, idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
        finally:
            await browser.close()
    assert {"SigAlg", "Signature", "SAMLRequest"} <= set(idp.raw_requests[0])
    message = idp.requests[0].message
    assert message.force_authn is None and message.subject is None


async def test_the_terminal_signs_in_through_saml(tmp_path, saml_idp):
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        key = bytes(range(32))
        client = f"http://localhost:9/callback?secret_key={key.hex()}"
        async with server.http.post(server.url + "/v1/webapi/saml/login/console",
                                    json={"connector_id": "corp", "redirect_url": client}) as answer:
            assert answer.status == 200
            url = (await answer.json())["redirect_url"]
        browser = Browser()
        try:
            status, _, page = await browser.get(url)
            action, fields = read_form(page)
            status, landed, _ = await browser.follow("POST", action, data=fields)
        finally:
            await browser.close()
        assert landed.startswith("http://localhost:9/callback?response=")
        answer = unseal(key, query_of(landed)["response"])
        assert answer["username"] == "alice@example.com" and answer["roles"] == ["admin"]
        async with server.http.get(server.url + "/v1/webapi/session",
                                   headers={"Authorization": f"Bearer {answer['token']}"}) as response:
            assert (await response.json())["connector"] == "corp"
        async with server.http.post(server.url + "/v1/webapi/saml/login/console",
                                    json={"connector_id": "corp", "redirect_url": "https://evil.example/callback"}) \
                as answer:
            assert answer.status == 400 and (await answer.json())["error"]["check"] == "redirect-url"


async def test_connectors_list_saml_and_metadata_names_the_sp(tmp_path, saml_idp):
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        async with server.http.get(server.url + "/v1/webapi/connectors") as answer:
            assert await answer.json() == [{"name": "corp", "kind": "saml", "display": "corp"}]
        async with server.http.get(server.url + "/v1/webapi/saml/metadata/nope") as answer:
            assert answer.status == 404
    assert f'entityID="{server.url}/sp"' in idp.sp_metadata
    assert f'Location="{server.url}/v1/webapi/saml/acs/corp"' in idp.sp_metadata
    assert "HTTP-POST" in idp.sp_metadata


async def test_reviewer_login_signs_in_through_the_only_saml_connector(tmp_path, saml_idp):
    from tests.auth.test_auth_terminal import run_cli
    idp = saml_idp
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        process = await run_cli("login", "--server", server.url, "--no-browser", env=env)
        assert process.stdout is not None
        url = ""
        while not url.startswith("http"):
            url = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().strip()
        assert url.startswith(idp.url + "/sso?SAMLRequest=")
        browser = Browser()
        try:
            status, _, page = await browser.get(url)
            action, fields = read_form(page)
            await browser.follow("POST", action, data=fields)
        finally:
            await browser.close()
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err.decode()
        assert "alice@example.com" in out.decode() and "admin" in out.decode()


async def test_an_mfa_round_through_saml_needs_the_same_user(tmp_path, saml_idp):
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        mfa = {"enabled": True, "issuer": idp.entity_id, "sso": idp.url + "/sso", "cert": idp.pair.cert_pem}
        await put_saml(server, idp.connector("corp", server.url, mfa=mfa), idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            await post_response(browser, acs, response)
            assert (await _session(browser, server))["mfaVerifiedAt"] is None

            idp.user = "mallory@example.com"
            status, url, page = await browser.get(f"{server.url}/v1/webapi/saml/mfa/web?connector_id=corp"
                                                  "&redirect_url=/console/")
            action, fields = read_form(page)
            status, _, page = await browser.follow("POST", action, data=fields)
            assert status == 403 and "<code>mfa-user</code>" in page
            assert (await _session(browser, server))["mfaVerifiedAt"] is None

            idp.user = "alice@example.com"
            status, url, page = await browser.get(f"{server.url}/v1/webapi/saml/mfa/web?connector_id=corp"
                                                  "&redirect_url=/console/")
            action, fields = read_form(page)
            status, landed, _ = await browser.follow("POST", action, data=fields)
            assert landed == server.url + "/console/"
            session = await _session(browser, server)
        finally:
            await browser.close()
    assert session["mfaVerifiedAt"] is not None and session["username"] == "alice@example.com"
    assert idp.requests[-1].message.force_authn == "true"  # an MFA round re-authenticates unless told not to
    assert idp.requests[0].message.force_authn is None


MFA_ADMIN_YAML = ADMIN_YAML + """\
  mfa:
    required: ["connectors:write"]
"""


async def test_the_terminal_passes_an_mfa_round_and_a_stale_one_is_refused(tmp_path, saml_idp):
    from tests.auth.test_auth_terminal import run_cli
    idp = saml_idp
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}

    async def browse(process) -> None:
        url = ""
        while not url.startswith("http"):
            url = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().strip()
        browser = Browser()
        try:
            status, _, page = await browser.get(url)
            action, fields = read_form(page)
            await browser.follow("POST", action, data=fields)
        finally:
            await browser.close()

    async with signin_server(tmp_path, MFA_ADMIN_YAML) as server:
        mfa = {"enabled": True, "issuer": idp.entity_id, "sso": idp.url + "/sso", "cert": idp.pair.cert_pem}
        doc = idp.connector("corp", server.url, mfa=mfa)
        await put_saml(server, doc, idp)
        process = await run_cli("login", "--server", server.url, "--no-browser", env=env)
        await browse(process)
        await asyncio.wait_for(process.communicate(), 30)
        token = json.loads((tmp_path / "config" / "reviewer" / "session.json").read_text())["token"]
        bearer = {"Authorization": f"Bearer {token}"}

        async def write() -> tuple[int, dict]:
            async with server.http.put(f"{server.url}{SAML_PATH}/corp", json=doc, headers=bearer) as response:
                return response.status, await response.json()

        status, body = await write()
        assert status == 403 and body["reason"] == "MFARequired"
        process = await run_cli("login", "--server", server.url, "--no-browser", "--mfa", env=env)
        await browse(process)
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err.decode()
        assert "MFA check passed" in out.decode() and token not in out.decode() + err.decode()
        assert idp.requests[-1].message.force_authn == "true"
        assert (await write())[0] == 200

        store = server.app[SIGNIN_STORE]  # five minutes later: the check is stale
        record = await store.get_session(token_key(token))
        await store.put_session(token_key(token), {**record, "mfa_verified_at": time.time() - 301},
                                record["expires"])
        status, body = await write()
        assert status == 403 and body["reason"] == "MFARequired"


async def test_a_terminal_mfa_round_needs_its_session(tmp_path, saml_idp):
    idp = saml_idp
    async with signin_server(tmp_path, MFA_ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        client = f"http://localhost:9/callback?secret_key={bytes(32).hex()}"
        for path in ("/v1/webapi/saml/mfa/console", "/v1/webapi/oidc/mfa/console"):
            async with server.http.post(server.url + path, json={"connector_id": "corp", "redirect_url": client},
                                        headers={"Authorization": "Bearer not-a-session"}) as answer:
                assert answer.status == 401 and (await answer.json())["error"]["check"] == "session"


async def test_single_logout_both_ways(tmp_path):
    idp = SamlIdP(want_signed_requests=True)
    sp = make_pair("reviewer sp")
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        doc = idp.connector("corp", server.url, single_logout_url=idp.url + "/slo",
                            signing_key_pair={"cert": sp.cert_pem, "private_key": sp.key_pem})
        await put_saml(server, doc, idp)
        slo = f"{server.url}/v1/webapi/saml/slo/corp"
        assert f'Location="{slo}"' in idp.sp_metadata
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            await post_response(browser, acs, response)
            async with browser.http.post(server.url + "/v1/webapi/logout", headers={"Origin": server.url}) as answer:
                body = await answer.json()
            assert body["signedOut"] is True and body["redirect_url"].startswith(idp.url + "/slo?SAMLRequest=")
            status, landed, _ = await browser.get(body["redirect_url"])
            # back on /console/, signed out: the console sends the browser to its login page
            assert landed == server.url + "/console/login?next=/console/", (status, landed)
            assert idp.logout_requests[0].name_id.text == "alice@example.com"
            assert idp.logout_requests[0].session_index  # the SessionIndex kept at sign-in
            replayed = next(h for h in browser.hops if h.startswith(slo))
            status, _, page = await browser.get(replayed)  # the LogoutResponse is used once
            assert status == 403 and "<code>slo-response</code>" in page

            acs, response = await start(browser, server, "corp")  # the IdP ends this session itself
            await post_response(browser, acs, response)
            assert (await _session(browser, server))["username"] == "alice@example.com"
            status, _, page = await browser.get(idp.logout_request_url(slo, "alice@example.com", sign=False))
            assert status == 403 and "<code>slo-signature</code>" in page
            assert (await _session(browser, server))["username"] == "alice@example.com"
            status, landed, _ = await browser.get(idp.logout_request_url(slo, "alice@example.com"))
            assert landed.startswith(server.url + "/console/") or landed.startswith(idp.url), landed
            async with browser.http.get(server.url + "/v1/webapi/session") as answer:
                assert answer.status == 401
        finally:
            await browser.close()


async def test_the_idp_comes_from_its_descriptor_url(tmp_path, saml_idp):
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        doc = idp.connector("corp", server.url, entity_descriptor_url=idp.url + "/metadata")
        for field in ("issuer", "sso", "cert"):
            del doc["spec"][field]
        await put_saml(server, doc, idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            await post_response(browser, acs, response)
            assert (await _session(browser, server))["username"] == "alice@example.com"
        finally:
            await browser.close()


@pytest.mark.parametrize("document", [
    '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="&x;"/>',
    "<md:EntityDescriptor " + "x" * (1024 * 1024 + 10),
])
async def test_a_hostile_descriptor_is_refused(tmp_path, document):
    idp = SamlIdP(metadata_override=document)
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        doc = idp.connector("corp", server.url, entity_descriptor_url=idp.url + "/metadata")
        for field in ("issuer", "sso", "cert"):
            del doc["spec"][field]
        async with server.http.put(f"{server.url}{SAML_PATH}/corp", json=doc,
                                   headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as answer:
            stored = await answer.json()
        reconciled = next(c for c in stored["status"]["conditions"] if c["type"] == "SuccessfullyReconciled")
        assert reconciled["status"] == "False" and "`spec.entity_descriptor_url`" in reconciled["message"]
        assert "root:" not in reconciled["message"]
        browser = Browser()
        try:
            status, _, page = await browser.get(f"{server.url}/v1/webapi/saml/sso?connector_id=corp")
        finally:
            await browser.close()
        assert status == 502 and "<code>entity-descriptor</code>" in page and "root:" not in page
        assert idp.requests == []


async def test_the_console_login_takes_a_matching_saml_user_to_the_idp_and_back(tmp_path, saml_idp):
    """Identifier-first in the console: a username that only a SAML connector's `user_matchers`
    match goes straight to that connector's sign-in, and the session lands on the console."""
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url, user_matchers=["*@example.com"]), idp)
        browser = Browser()
        try:
            status, landed, _ = await browser.get(server.url + "/console/login?username=alice@example.com"
                                                  "&next=/console/deliveries")
            assert landed.startswith(idp.url), (status, landed)  # HTTP-Redirect binding: at the IdP
            async with browser.http.get(server.url + "/console/login?next=/console/") as answer:
                listed = await answer.text()
            assert "/v1/webapi/saml/sso?connector_id=corp" in listed.replace("&amp;", "&")
        finally:
            await browser.close()
