"""Changing where a connector sends its secrets (bot/auth/destinations.py), hostile: an editor who
may write connectors but has no fresh MFA check cannot re-point an existing connector's issuer
(its client secret, even a `secret://` reference, would go there at the next sign-in), through the
resource API or the console; with one, the change is made and the audit log names the old and new
hosts; a narrowed editor is refused with the reason; without MFA configured, or with the
break-glass token, it is made. And connector names are unique across kinds."""

from __future__ import annotations

import copy
import json
import time

import aiohttp

from bot.auth.sessions import Session, create_session
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.connectors_support import saml_doc
from tests.support.console_support import console_server, csrf_of
from tests.support.oidc_support import ADMIN_TOKEN, connector_doc, put_connector

MFA_ACCESS = """\
access:
  roles:
    admin:  {allow: ["*"]}
    writer: {allow: ["connectors:read", "connectors:write"]}
    narrow: {allow: ["connectors:read", "connectors:write"], accounts: ["acme*"]}
  mfa:
    required: ["config:write"]
"""
PATH = "/apis/resources.service.dev/v3/oidcconnectors/corp"


async def _token(server, roles: list[str], mfa: bool = False) -> str:
    """A session of a user signed in through the connector `mock` (with an MFA check just made)."""
    now = time.time()
    session = Session("ed@example.com", "mock", roles, now, now + 3600, mfa_verified_at=now if mfa else None)
    return await create_session(server.app[SIGNIN_STORE], session)


def _moved(server) -> dict:
    doc = connector_doc("corp", "http://127.0.0.1:9", server.url)
    moved = copy.deepcopy(doc)
    moved["spec"]["issuer_url"] = "https://idp.evil.example"
    return moved


async def _put(server, doc: dict, token: str) -> tuple[int, dict]:
    async with server.http.put(server.url + PATH, json=doc, headers={"Authorization": f"Bearer {token}"}) as answer:
        return answer.status, await answer.json()


async def _audit(server) -> list[dict]:
    async with server.http.get(server.url + "/v1/audit?action=connector.apply",
                               headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
        return (await response.json())["entries"]


async def test_re_pointing_an_issuer_needs_an_mfa_check_and_is_audited_with_its_hosts(tmp_path):
    async with console_server(tmp_path, admin_yaml=MFA_ACCESS) as server:
        await put_connector(server, connector_doc("mock", "http://127.0.0.1:9", server.url))
        await put_connector(server, connector_doc("corp", "http://127.0.0.1:9", server.url))
        status, answer = await _put(server, _moved(server), await _token(server, ["writer"]))
        assert status == 403 and answer["reason"] == "MFARequired"
        assert "changing where connector `corp` sends its secrets (`spec.issuer_url`)" in answer["message"]
        status, answer = await _put(server, _moved(server), await _token(server, ["narrow"], mfa=True))
        assert status == 403 and "needs the permission on every account" in answer["message"]
        async with server.http.get(server.url + PATH, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as r:
            assert (await r.json())["spec"]["issuer_url"] == "http://127.0.0.1:9"  # nothing changed
        status, answer = await _put(server, _moved(server), await _token(server, ["writer"], mfa=True))
        assert status == 200, answer
        entry = (await _audit(server))[0]
    assert entry["actor"] == "ed@example.com" and entry["target"] == "oidcconnectors/corp"
    assert entry["details"]["destinations"] == [{"field": "spec.issuer_url", "from": ["127.0.0.1"],
                                                 "to": ["idp.evil.example"]}]


async def test_the_console_asks_for_the_mfa_round_before_re_pointing(tmp_path):
    async with console_server(tmp_path, admin_yaml=MFA_ACCESS) as server:
        await put_connector(server, connector_doc("mock", "http://127.0.0.1:9", server.url))
        await put_connector(server, connector_doc("corp", "http://127.0.0.1:9", server.url))
        jar = aiohttp.CookieJar(unsafe=True)
        jar.update_cookies({"reviewer_session": await _token(server, ["writer"])}, aiohttp.client.URL(server.url))
        async with aiohttp.ClientSession(cookie_jar=jar, headers={"Origin": server.url}) as browser:
            async with browser.get(server.url + "/console/connectors/oidcconnectors/corp") as response:
                csrf = csrf_of(await response.text())
            async with browser.post(server.url + "/console/connectors/apply",
                                    data={"csrf": csrf, "yaml": json.dumps(_moved(server))}) as response:
                page = await response.text()
                assert response.status == 403
        assert "sends its secrets" in page and "/v1/webapi/oidc/mfa/web?" in page
        async with server.http.get(server.url + PATH, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as r:
            assert (await r.json())["spec"]["issuer_url"] == "http://127.0.0.1:9"


async def test_without_mfa_configured_or_with_the_break_glass_token_an_editor_may_re_point(tmp_path):
    async with console_server(tmp_path, admin_yaml=MFA_ACCESS.split("  mfa:")[0]) as server:
        await put_connector(server, connector_doc("mock", "http://127.0.0.1:9", server.url))
        await put_connector(server, connector_doc("corp", "http://127.0.0.1:9", server.url))
        assert (await _put(server, _moved(server), await _token(server, ["writer"])))[0] == 200
    (tmp_path / "token").mkdir()
    async with console_server(tmp_path / "token", admin_yaml=MFA_ACCESS) as server:
        await put_connector(server, connector_doc("corp", "http://127.0.0.1:9", server.url))
        assert (await _put(server, _moved(server), ADMIN_TOKEN))[0] == 200


async def test_an_oidc_and_a_saml_connector_may_not_share_a_name(tmp_path):
    async with console_server(tmp_path) as server:
        await put_connector(server, connector_doc("corp", "http://127.0.0.1:9", server.url))
        saml = saml_doc()
        saml["metadata"]["name"] = "corp"
        async with server.http.put(server.url + "/apis/resources.service.dev/v2/samlconnectors/corp", json=saml,
                                   headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
            answer = await response.json()
            assert response.status == 409 and answer["reason"] == "AlreadyExists"
        assert 'a ServiceOIDCConnector named "corp" exists' in answer["message"]
        async with server.http.get(server.url + "/apis/resources.service.dev/v2/samlconnectors/corp",
                                   headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
            assert response.status == 404
