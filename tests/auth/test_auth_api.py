"""Sessions against the resource and admin APIs, end to end over HTTP: permissions from roles,
`accounts`, MFA, the Origin check on cookie writes, identifier-first listing, cookie flags and
logout. The provider is the tests' own (it answers the authorize step at once)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from http.cookies import SimpleCookie

from tests.support.oidc_support import (
    ADMIN_TOKEN,
    Browser,
    HostileProvider,
    connector_doc,
    put_connector,
    signin_server,
)

OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
ADMIN_YAML = """\
access:
  roles:
    admin:   {allow: ["*"]}
    auditor: {allow: ["config:read", "connectors:read"], accounts: ["acme*"]}
  mfa:
    required: ["connectors:write"]
"""
MAPPINGS = [{"claim": "groups", "value": "^(admin|auditor)s$", "roles": ["$1"]}]


@asynccontextmanager
async def signed_in(tmp_path, groups: list[str], admin_yaml: str | None = ADMIN_YAML, **env: str):
    provider = HostileProvider(claims={"groups": groups})
    async with provider.serving(), signin_server(tmp_path, admin_yaml, **env) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url, claims_to_roles=MAPPINGS))
        browser = Browser()
        try:
            await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=idp")
            assert browser.cookie("reviewer_session"), browser.hops
            yield server, browser
        finally:
            await browser.close()


async def status_of(browser: Browser, method: str, url: str, **kwargs) -> tuple[int, dict]:
    async with browser.http.request(method, url, **kwargs) as response:
        return response.status, await response.json(content_type=None)


async def test_accounts_narrow_the_effective_config_api(tmp_path):
    async with signed_in(tmp_path, ["auditors"]) as (server, browser):
        status, body = await status_of(browser, "GET", server.url + "/api/config/acme-corp/app")
        assert status == 503  # allowed: it gets as far as needing GitHub, which this server lacks
        status, body = await status_of(browser, "GET", server.url + "/api/config/other/app")
        assert status == 403 and body["kind"] == "Status" and body["reason"] == "Forbidden"
        assert "config:read on account other" in body["message"]
        status, body = await status_of(browser, "GET", server.url + "/api/config/other/app",
                                       headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert status == 503  # the break-glass token has every permission on every account


async def test_a_write_that_needs_mfa_answers_mfa_required(tmp_path):
    async with signed_in(tmp_path, ["admins"]) as (server, browser):
        doc = connector_doc("other", "https://idp.example.com", server.url)
        status, body = await status_of(browser, "PUT", server.url + OIDC_PATH + "/other", json=doc,
                                       headers={"Origin": server.url})
        assert status == 403 and body["reason"] == "MFARequired" and body["code"] == 403
        status, _ = await status_of(browser, "GET", server.url + OIDC_PATH)
        assert status == 200
        status, _ = await status_of(browser, "PUT", server.url + OIDC_PATH + "/other", json=doc,
                                    headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert status == 201


async def test_cookie_writes_must_come_from_this_server(tmp_path):
    async with signed_in(tmp_path, ["admins"], admin_yaml=None) as (server, browser):
        doc = connector_doc("other", "https://idp.example.com", server.url)
        url = server.url + OIDC_PATH + "/other"
        for headers in ({}, {"Origin": "https://evil.example"}, {"Origin": "null"},
                        {"Referer": "https://evil.example/page"}, {"Origin": server.url.replace("127.0.0.1", "localhost")}):
            status, body = await status_of(browser, "PUT", url, json=doc, headers=headers)
            assert status == 403 and body["reason"] == "Forbidden", headers
        status, _ = await status_of(browser, "DELETE", server.url + OIDC_PATH + "/idp",
                                    headers={"Origin": "https://evil.example"})
        assert status == 403
        status, _ = await status_of(browser, "PUT", url, json=doc, headers={"Referer": server.url + "/console/"})
        assert status == 201  # the default access: `admin` has every permission, no MFA required

        status, _ = await status_of(browser, "POST", server.url + "/v1/webapi/logout",
                                    headers={"Origin": "https://evil.example"})
        assert status == 403
        status, _ = await status_of(browser, "GET", server.url + "/v1/webapi/session")
        assert status == 200
        status, _ = await status_of(browser, "POST", server.url + "/v1/webapi/logout", headers={"Origin": server.url})
        assert status == 200
        status, _ = await status_of(browser, "GET", server.url + OIDC_PATH)
        assert status == 401


async def test_identifier_first_lists_the_connectors_that_match(tmp_path):
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path) as server:
        await put_connector(server, connector_doc("staff", provider.url, server.url, display="Staff SSO",
                                                  user_matchers=["*@example.com"]))
        await put_connector(server, connector_doc("anyone", provider.url, server.url))
        broken = connector_doc("broken", provider.url, server.url, client_secret="secret://broken/absent")
        async with server.http.put(server.url + OIDC_PATH + "/broken", json=broken,
                                   headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
            assert response.status == 201
        async with server.http.get(server.url + "/v1/webapi/connectors") as response:
            listed = await response.json()
        assert sorted(c["name"] for c in listed) == ["anyone", "staff"]  # `broken` is not ready
        assert {"name": "staff", "kind": "oidc", "display": "Staff SSO"} in listed
        async with server.http.get(server.url + "/v1/webapi/connectors?username=bob@other.org") as response:
            assert [c["name"] for c in await response.json()] == ["anyone"]
        async with server.http.get(server.url + "/v1/webapi/connectors?username=ann@example.com") as response:
            assert sorted(c["name"] for c in await response.json()) == ["anyone", "staff"]
        async with server.http.get(server.url + "/v1/webapi/oidc/login/web?connector_id=broken") as response:
            assert response.status == 400 and "not ready" in await response.text()


USER_MATCHER_CASES = [
    ("ann@example.com", True),
    ("ops", True),
    ("ann@example.com.evil.net", False),  # `^…$` matches the whole name: never a prefix
    ("not-ops", False),
    ("dev-ann", True),  # a glob beside it
    ("xdev-ann", False),
    ("b?b", True),  # a glob's only wildcard is `*`: `?` is itself
    ("bob", False),
]


async def test_user_matchers_match_the_whole_username(tmp_path):
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path) as server:
        await put_connector(server, connector_doc("staff", provider.url, server.url,
                                                  user_matchers=["^[a-z]+@example\\.com|ops$", "dev-*", "b?b"]))
        found = []
        for username, _ in USER_MATCHER_CASES:
            async with server.http.get(server.url + "/v1/webapi/connectors",
                                       params={"username": username}) as response:
                found.append((username, [c["name"] for c in await response.json()] == ["staff"]))
        assert found == USER_MATCHER_CASES


async def test_cookies_are_secure_under_an_https_public_url(tmp_path):
    provider = HostileProvider()
    public = "https://reviewer.example.test"
    async with provider.serving(), signin_server(tmp_path, REVIEWER_PUBLIC_URL=public,
                                                 REVIEWER_SESSION_TTL="2h") as server:
        doc = connector_doc("idp", provider.url, server.url)
        doc["spec"]["redirect_url"] = ["https://other.example.test/v1/webapi/oidc/callback",
                                       public + "/v1/webapi/oidc/callback"]
        await put_connector(server, doc)
        async with server.http.get(server.url + "/v1/webapi/oidc/login/web?connector_id=idp",
                                   allow_redirects=False) as response:
            binding = SimpleCookie(response.headers["Set-Cookie"])["__Host-reviewer_signin"]
            authorize = response.headers["Location"]
        assert binding["secure"] and binding["httponly"] and binding["samesite"] == "Lax"
        assert binding["path"] == "/" and not binding["domain"]  # what `__Host-` requires
        async with server.http.get(authorize, allow_redirects=False) as response:
            callback = response.headers["Location"]
        assert callback.startswith(public + "/v1/webapi/oidc/callback?")  # chosen by REVIEWER_PUBLIC_URL
        local = callback.replace(public, server.url)
        async with server.http.get(local, allow_redirects=False,
                                   cookies={"__Host-reviewer_signin": binding.value}) as response:
            assert response.status == 302
            session = SimpleCookie(response.headers.getall("Set-Cookie")[0])["__Host-reviewer_session"]
        assert session["secure"] and session["httponly"] and session["samesite"] == "Lax" and session["path"] == "/"
        assert not session["domain"] and int(session["max-age"]) == 7200
        # Hostile: the same token under the plain name (which a sibling subdomain could set) is no session.
        async with server.http.get(server.url + "/v1/webapi/session",
                                   cookies={"reviewer_session": session.value}) as response:
            assert response.status == 401
        async with server.http.get(server.url + "/v1/webapi/session",
                                   cookies={"__Host-reviewer_session": session.value}) as response:
            assert response.status == 200


async def test_a_planted_binding_cookie_is_never_reused(tmp_path):
    """Hostile (login CSRF): a binding cookie set by someone else (a sibling subdomain, over http)
    must not become the binding of the sign-in this browser starts."""
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url))
        planted = "A" * 43
        async with server.http.get(server.url + "/v1/webapi/oidc/login/web?connector_id=idp", allow_redirects=False,
                                   cookies={"reviewer_signin": planted}) as response:
            minted = SimpleCookie(response.headers["Set-Cookie"])["reviewer_signin"]
            authorize = response.headers["Location"]
        assert minted.value != planted and len(minted.value) >= 43
        async with server.http.get(authorize, allow_redirects=False) as response:
            callback = response.headers["Location"]
        async with server.http.get(callback, allow_redirects=False, cookies={"reviewer_signin": planted}) as response:
            assert response.status == 403  # the planted binding does not complete this sign-in
            assert "reviewer_session" not in response.headers.get("Set-Cookie", "")
