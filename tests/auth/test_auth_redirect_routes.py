"""Every route that sends a browser somewhere checks its target with the one strict parser: the
reported takeover (`https://evil.com\\.example.com/callback` passing `*.example.com`) and its
relatives on the OIDC and SAML terminal logins and both MFA console routes, and encoded off-site
paths on the web sign-in starts, the MFA web rounds and the console's `next` — each refused
before any provider is contacted. The rules themselves are tabled in tests/auth/test_auth_terminal.py."""

from __future__ import annotations

from urllib.parse import quote

from tests.support.oidc_support import Browser, HostileProvider, connector_doc, put_connector, signin_server
from tests.support.saml_support import post_response, put_saml, require_xmlsec, start

KEY = "cd" * 32
REDIRECTS = {"allowed_https_hostnames": ["*.example.com", "^cli\\.example\\.org|cli2\\.example\\.org$"]}
ALLOWED = f"https://cli.example.com/callback?secret_key={KEY}"
EVIL_CLIENTS = [
    f"https://evil.com\\.example.com/callback?secret_key={KEY}",
    f"https://evil.com%5C.example.com/callback?secret_key={KEY}",
    f"https://evil.com%2F.example.com/callback?secret_key={KEY}",
    f"https://a.example.com@evil.com/callback?secret_key={KEY}",
    f"https://evil.com\u3002example.com/callback?secret_key={KEY}",
    f"https://cli.example.org.evil.net/callback?secret_key={KEY}",
    f"https://evil.com\t.example.com/callback?secret_key={KEY}",
]
EVIL_PATHS = ["/%2F%2Fevil.example", "/%5Cevil.example", "/\\evil.example", "/.//evil.example",
              "/console/%2e%2e//evil.example", "//evil.example"]
ADMIN_YAML = "access:\n  roles:\n    admin: {allow: [\"*\"]}\n"


async def _post(server, path: str, body: dict, headers: dict | None = None) -> tuple[int, dict]:
    async with server.http.post(server.url + path, json=body, headers=headers or {}) as response:
        return response.status, await response.json()


async def _refused_clients(server, path: str, connector: str, headers: dict | None = None) -> None:
    for client in EVIL_CLIENTS:
        status, answer = await _post(server, path, {"connector_id": connector, "redirect_url": client}, headers)
        assert status == 400 and answer["error"]["check"] == "redirect-url", (path, client, answer)
        assert KEY not in answer["error"]["message"]  # the client's key is never echoed


async def _refused_paths(browser: Browser, start_url: str) -> None:
    for path in EVIL_PATHS:
        status, landed, body = await browser.get(start_url + "&redirect_url=" + quote(path))
        assert status == 400 and "<code>redirect-url</code>" in body, (start_url, path, status, landed)


async def test_oidc_routes_refuse_what_a_browser_reads_as_another_site(tmp_path):
    provider = HostileProvider(other_clients={"mfa-client": "mfa-secret-value"})
    mfa = {"enabled": True, "client_id": "mfa-client", "client_secret": "mfa-secret-value"}
    async with provider.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url, mfa=mfa,
                                                  client_redirect_settings=REDIRECTS))
        browser = Browser()
        try:
            await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=idp")
            token = browser.cookie("reviewer_session")
            assert token
            before = len(provider.authorize_params)
            await _refused_clients(server, "/v1/webapi/oidc/login/console", "idp")
            await _refused_clients(server, "/v1/webapi/oidc/mfa/console", "idp", {"Authorization": f"Bearer {token}"})
            await _refused_paths(browser, f"{server.url}/v1/webapi/oidc/login/web?connector_id=idp")
            await _refused_paths(browser, f"{server.url}/v1/webapi/oidc/mfa/web?connector_id=idp")
            assert len(provider.authorize_params) == before  # no provider was asked
            for path in EVIL_PATHS:  # the console's `next` falls back to the overview
                async with browser.http.get(server.url + "/console/login", params={"next": path}) as response:
                    body = await response.text()
                assert "evil.example" not in body and quote("/console/", safe="") in body
            status, answer = await _post(server, "/v1/webapi/oidc/login/console",
                                         {"connector_id": "idp", "redirect_url": ALLOWED})
            assert status == 200 and answer["redirect_url"].startswith(provider.url), answer
        finally:
            await browser.close()


async def test_saml_routes_refuse_what_a_browser_reads_as_another_site(tmp_path, saml_idp):
    require_xmlsec()
    idp = saml_idp
    async with signin_server(tmp_path, ADMIN_YAML) as server:
        mfa = {"enabled": True, "issuer": idp.entity_id, "sso": idp.url + "/sso", "cert": idp.pair.cert_pem}
        await put_saml(server, idp.connector("corp", server.url, mfa=mfa, client_redirect_settings=REDIRECTS), idp)
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            await post_response(browser, acs, response)
            token = browser.cookie("reviewer_session")
            assert token
            before = len(idp.requests)
            await _refused_clients(server, "/v1/webapi/saml/login/console", "corp")
            await _refused_clients(server, "/v1/webapi/saml/mfa/console", "corp", {"Authorization": f"Bearer {token}"})
            await _refused_paths(browser, f"{server.url}/v1/webapi/saml/sso?connector_id=corp")
            await _refused_paths(browser, f"{server.url}/v1/webapi/saml/mfa/web?connector_id=corp")
            assert len(idp.requests) == before
            status, answer = await _post(server, "/v1/webapi/saml/login/console",
                                         {"connector_id": "corp", "redirect_url": ALLOWED})
            assert status == 200 and answer["redirect_url"].startswith(idp.url), answer
        finally:
            await browser.close()
