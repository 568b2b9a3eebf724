"""SAML sign-in against `reviewer serve` as its own process, over HTTP only: a real pysaml2 IdP,
an encrypted assertion, single logout — and the log never carries a key, a token or an assertion."""

from __future__ import annotations

import signal

import aiohttp
import pytest

from tests.auth.test_auth_real_provider import start_serve
from tests.support.oidc_support import ADMIN_TOKEN, Browser, Remote
from tests.support.saml_support import SamlIdP, decode, make_pair, post_response, put_saml, require_xmlsec, start

pytestmark = pytest.mark.slow  # a `reviewer serve` process of its own: `make test-fast` leaves it out


async def test_reviewer_serve_signs_in_through_saml_and_logs_no_secret(tmp_path, app_private_key):
    require_xmlsec()
    proc, port, lines = start_serve(tmp_path, app_private_key)
    url = f"http://127.0.0.1:{port}"
    sp = make_pair("reviewer sp")
    idp = SamlIdP(encrypt=True, want_signed_requests=True)
    try:
        async with idp.serving(), aiohttp.ClientSession() as http:
            server = Remote(url, http)
            pair = {"cert": sp.cert_pem, "private_key": sp.key_pem}
            await put_saml(server, idp.connector("corp", url, signing_key_pair=pair, assertion_key_pair=pair,
                                                 single_logout_url=idp.url + "/slo"), idp)
            browser = Browser()
            try:
                acs, response = await start(browser, server, "corp")
                status, landed, _ = await post_response(browser, acs, response)
                assert landed == url + "/console/repos", (status, landed)
                token = browser.cookie("reviewer_session")
                assert token
                async with browser.http.post(url + "/v1/webapi/logout", headers={"Origin": url}) as answer:
                    body = await answer.json()
                status, landed, _ = await browser.get(body["redirect_url"])
                assert landed == url + "/console/login?next=/console/"  # signed out: the console's login
            finally:
                await browser.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    log = "".join(lines)
    assert "signed in: connector=corp" in log
    key_line = sp.key_pem.splitlines()[1]
    for secret in (token, ADMIN_TOKEN, key_line, response[:40], decode(response)[200:260]):
        assert secret not in log
