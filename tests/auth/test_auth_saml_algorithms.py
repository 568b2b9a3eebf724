"""SAML signatures without SHA-1, and ForceAuthn that is checked: against pysaml2's real IdP.

What we sign (AuthnRequests on both bindings, LogoutRequests, LogoutResponses) is RSA-SHA256 with
SHA-256 digests; a response, an assertion or a logout message signed or digested with SHA-1 is
refused with the algorithm named (and the sign-in log keeps it). A round that asked ForceAuthn (an
MFA round by default) must come back with a fresh AuthnInstant, as OIDC's `auth_time` must.
"""

from __future__ import annotations

import base64
import re
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from saml2.xmldsig import DIGEST_SHA1, DIGEST_SHA256, SIG_RSA_SHA1, SIG_RSA_SHA256

from bot.server.signin.routes import SIGNIN_STORE
from tests.auth.test_auth_saml import ADMIN_YAML
from tests.support.oidc_support import Browser, signin_server
from tests.support.saml_support import SamlIdP, make_pair, post_response, put_saml, read_form, start

pytestmark = pytest.mark.usefixtures("xmlsec")


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


async def _session(browser: Browser, server) -> dict:
    async with browser.http.get(server.url + "/v1/webapi/session") as answer:
        return await answer.json() if answer.status == 200 else {}


async def test_what_we_sign_is_rsa_sha256(tmp_path):
    idp = SamlIdP(want_signed_requests=True)
    sp = make_pair("reviewer sp")
    pair = {"cert": sp.cert_pem, "private_key": sp.key_pem}
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("redirect", server.url, signing_key_pair=pair,
                                             single_logout_url=idp.url + "/slo"), idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "redirect")
            assert idp.raw_requests[-1]["SigAlg"] == SIG_RSA_SHA256  # the HTTP-Redirect binding's signature
            await post_response(browser, acs, response)
            async with browser.http.post(server.url + "/v1/webapi/logout", headers={"Origin": server.url}) as answer:
                logout = (await answer.json())["redirect_url"]
            assert _query(logout)["SigAlg"] == SIG_RSA_SHA256  # our LogoutRequest

            acs, response = await start(browser, server, "redirect")  # the IdP ends this session itself
            await post_response(browser, acs, response)
            slo = f"{server.url}/v1/webapi/saml/slo/redirect"
            await browser.get(idp.logout_request_url(slo, "alice@example.com"))
            answered = [hop for hop in browser.hops if hop.startswith(idp.url + "/slo?SAMLResponse=")]
            assert answered and _query(answered[-1])["SigAlg"] == SIG_RSA_SHA256  # our LogoutResponse

            await put_saml(server, idp.connector("post", server.url, signing_key_pair=pair,
                                                 preferred_request_binding="http-post"), idp)
            status, _, page = await browser.get(f"{server.url}/v1/webapi/saml/sso?connector_id=post"
                                                "&redirect_url=/console/")
            _, fields = read_form(page)
        finally:
            await browser.close()
    request = base64.b64decode(fields["SAMLRequest"]).decode()  # the HTTP-POST binding's enveloped signature
    assert re.findall(r'SignatureMethod Algorithm="([^"]+)"', request) == [SIG_RSA_SHA256]
    assert re.findall(r'DigestMethod Algorithm="([^"]+)"', request) == [DIGEST_SHA256]


@pytest.mark.parametrize("shape, algorithm", [
    pytest.param({"sign_alg": SIG_RSA_SHA1}, SIG_RSA_SHA1, id="assertion-signed-rsa-sha1"),
    pytest.param({"digest_alg": DIGEST_SHA1}, DIGEST_SHA1, id="assertion-digested-sha1"),
    pytest.param({"sign_alg": SIG_RSA_SHA1, "sign_response": True, "sign_assertion": False}, SIG_RSA_SHA1,
                 id="response-signed-rsa-sha1"),
    pytest.param({"digest_alg": DIGEST_SHA1, "sign_response": True, "sign_assertion": False}, DIGEST_SHA1,
                 id="response-digested-sha1"),
    pytest.param({"sign_alg": SIG_RSA_SHA1, "encrypt": True}, SIG_RSA_SHA1, id="encrypted-assertion-rsa-sha1"),
])
async def test_a_sha1_signature_is_refused_naming_the_algorithm(tmp_path, shape, algorithm):
    """Hostile: the IdP's certificate really signed it, but with SHA-1 (collisions are practical)."""
    idp = SamlIdP(**shape)
    sp = make_pair("reviewer sp")
    spec = {"assertion_key_pair": {"cert": sp.cert_pem, "private_key": sp.key_pem}} if idp.encrypt else {}
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url, **spec), idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            status, _, page = await post_response(browser, acs, response)
            assert status == 403 and "<code>saml-algorithm</code>" in page, page[:800]
            assert algorithm in page and browser.cookie("reviewer_session") is None
        finally:
            await browser.close()
        entry = (await server.app[SIGNIN_STORE].signins())[0]
    assert entry["ok"] is False and entry["check"] == "saml-algorithm" and algorithm in entry["message"]


async def test_a_logout_request_signed_with_sha1_ends_nothing(tmp_path, saml_idp):
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url, single_logout_url=idp.url + "/slo"), idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            await post_response(browser, acs, response)
            idp.sign_alg = SIG_RSA_SHA1
            status, _, page = await browser.get(idp.logout_request_url(f"{server.url}/v1/webapi/saml/slo/corp",
                                                                       "alice@example.com"))
            assert status == 403 and "<code>saml-algorithm</code>" in page and SIG_RSA_SHA1 in page
            assert (await _session(browser, server))["username"] == "alice@example.com"  # still signed in
        finally:
            await browser.close()


MFA = {"enabled": True}


async def _mfa_round(browser: Browser, server) -> tuple[int, str, str]:
    status, _, page = await browser.get(f"{server.url}/v1/webapi/saml/mfa/web?connector_id=corp"
                                        "&redirect_url=/console/")
    action, fields = read_form(page)
    return await browser.follow("POST", action, data=fields)


async def test_an_mfa_round_needs_a_fresh_authn_instant(tmp_path, saml_idp):
    """Hostile: the IdP ignores ForceAuthn and answers from a session of an hour ago."""
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        mfa = {"enabled": True, "issuer": idp.entity_id, "sso": idp.url + "/sso", "cert": idp.pair.cert_pem}
        await put_saml(server, idp.connector("corp", server.url, mfa=mfa), idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            idp.authn_instant = time.time() - 3600
            await post_response(browser, acs, response)  # a login asked no ForceAuthn: an old login is fine
            assert (await _session(browser, server))["username"] == "alice@example.com"

            status, _, page = await _mfa_round(browser, server)
            assert status == 403 and "<code>saml-authn-instant</code>" in page, page[:800]
            assert (await _session(browser, server))["mfaVerifiedAt"] is None
            entry = (await server.app[SIGNIN_STORE].signins())[0]
            assert entry["ok"] is False and entry["check"] == "saml-authn-instant"

            idp.authn_instant = time.time() - 90  # within the two minutes of skew
            status, landed, _ = await _mfa_round(browser, server)
            assert landed == server.url + "/console/", (status, landed)
            assert (await _session(browser, server))["mfaVerifiedAt"] is not None
        finally:
            await browser.close()


async def test_a_login_that_asked_force_authn_needs_a_fresh_authn_instant(tmp_path):
    idp = SamlIdP(authn_instant=time.time() - 600)
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url, force_authn="yes"), idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            status, _, page = await post_response(browser, acs, response)
        finally:
            await browser.close()
    assert status == 403 and "<code>saml-authn-instant</code>" in page and "ForceAuthn" in page
