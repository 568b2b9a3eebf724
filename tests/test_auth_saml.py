"""Signing in through a real SAML IdP (pysaml2's, signing with xmlsec1), over HTTP: the browser
flow, the terminal flow, the SP metadata, encrypted assertions and the request's shape."""

from __future__ import annotations

import pytest

from tests.oidc_support import Browser, signin_server
from tests.saml_support import SamlIdP, post_response, put_saml, require_xmlsec, start

ADMIN_YAML = """\
access:
  roles:
    admin: {allow: ["*"]}
    reader: {allow: ["connectors:read"]}
"""


@pytest.fixture(autouse=True)
def _xmlsec() -> None:
    require_xmlsec()


async def test_a_browser_signs_in_through_saml(tmp_path):
    idp = SamlIdP()
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
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
