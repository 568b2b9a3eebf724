"""The console's "Test sign-in" for SAML connectors, over HTTP against a real pysaml2 IdP: the
attributes and the roles they map to come back to the connector's page once, and no session or
single-logout entry is made — not even when no role matches; the permission, the replay defences
and unknown result ids.

Each test runs on SQLite and on PostgreSQL (the `database_url` fixture)."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import aiohttp
import pytest

from bot.server.signin.routes import SIGNIN_STORE
from tests.support.console_support import console_server, session_for
from tests.support.oidc_support import Browser
from tests.support.saml_support import SamlIdP, decode, encode, put_saml, read_form, resign, start

PAGE = "/console/connectors/samlconnectors/corp"


pytestmark = pytest.mark.usefixtures("xmlsec")


def saml_test_url(server, name: str = "corp", redirect: str = PAGE) -> str:
    return f"{server.url}/v1/webapi/saml/test/web?" + urlencode({"connector_id": name, "redirect_url": redirect})


async def idp_answer(server, browser: aiohttp.ClientSession) -> tuple[str, str]:
    """Starts a test sign-in as `browser` and lets the IdP answer: the ACS URL and the SAMLResponse
    its page would post (not yet posted)."""
    async with browser.get(saml_test_url(server), allow_redirects=False) as response:
        assert response.status == 302, await response.text()
        to_idp = response.headers["Location"]
    async with browser.get(to_idp) as response:
        action, fields = read_form(await response.text())
    return action, fields["SAMLResponse"]


async def post_answer(browser: aiohttp.ClientSession, acs: str, saml_response: str) -> aiohttp.ClientResponse:
    async with browser.post(acs, data={"SAMLResponse": saml_response}, allow_redirects=False) as response:
        await response.read()
        return response


async def result_page(server, browser: aiohttp.ClientSession, location: str) -> str:
    assert location.startswith(PAGE + "?test="), location
    async with browser.get(server.url + location) as response:
        assert response.status == 200
        return await response.text()


async def test_a_saml_test_sign_in_shows_attributes_and_roles_once_and_keeps_no_session(tmp_path, database_url):
    idp = SamlIdP(attributes={"groups": ["admins", "staff"], "department": ["platform"]})
    async with idp.serving(), console_server(tmp_path, database_url=database_url) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        writer = await session_for(server, ["writer"])  # dana@example.com, through the OIDC connector "mock"
        store = server.app[SIGNIN_STORE]
        try:
            async with writer.get(server.url + PAGE) as response:
                page = await response.text()
            assert 'href="/v1/webapi/saml/test/web?connector_id=corp&amp;redirect_url=' in page  # the button
            acs, answer = await idp_answer(server, writer)
            response = await post_answer(writer, acs, answer)
            assert response.status == 302
            assert "reviewer_session" not in response.cookies  # the test sets no session cookie
            page = await result_page(server, writer, response.headers["Location"])
            assert "Test sign-in: alice@example.com" in page
            assert "Attributes received" in page and "Claims received" not in page
            assert "<code>department</code>" in page and '["platform"]' in page
            assert re.search(r"Roles the attributes map to</dt><dd>admin</dd>", page)
            assert re.search(r"Roles the admin file defines</dt><dd>admin</dd>", page)
            async with writer.get(server.url + response.headers["Location"]) as again:
                assert 'id="tested"' not in await again.text()  # shown once
            # nothing of a session: none for the connector, no single-logout entry, the browser's own unchanged
            assert await store.delete_connector_sessions("corp") == 0
            assert await store.take_sso_sessions("corp", "alice@example.com") == []
            async with writer.get(server.url + "/v1/webapi/session") as who:
                assert (await who.json())["username"] == "dana@example.com"

            # no role matches: still no session, and the page says what a sign-in would do
            idp.attributes = {"groups": ["visitors"]}
            acs, answer = await idp_answer(server, writer)
            response = await post_answer(writer, acs, answer)
            page = await result_page(server, writer, response.headers["Location"])
            assert re.search(r"Roles the attributes map to</dt><dd>none</dd>", page)
            assert "none: this user would be refused" in page
            assert await store.delete_connector_sessions("corp") == 0
            assert await store.take_sso_sessions("corp", "alice@example.com") == []

            tests = [e for e in await store.signins(10) if e["flow"] == "test"]
            assert [(e["kind"], e["connector"], e["ok"], e["roles"]) for e in tests] == [
                ("saml", "corp", True, []), ("saml", "corp", True, ["admin"])]  # newest first
            assert tests[1]["claims"] == ["department", "groups"]  # names only, never values
        finally:
            await writer.close()


async def test_without_connectors_write_the_saml_test_is_refused(tmp_path, database_url, saml_idp):
    idp = saml_idp
    async with console_server(tmp_path, database_url=database_url) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        auditor = await session_for(server, ["auditor", "watcher"])
        try:
            async with auditor.get(saml_test_url(server), allow_redirects=False) as response:
                assert response.status == 403
                page = await response.text()
            assert "<code>permission</code>" in page and "connectors:write" in page
            async with server.http.get(saml_test_url(server), allow_redirects=False) as response:  # signed out
                assert response.status == 401
            async with auditor.get(server.url + PAGE) as response:
                assert "Test sign-in" not in await response.text()  # no button it may not use
        finally:
            await auditor.close()
        assert idp.requests == []  # the IdP never heard of it


async def test_a_replayed_test_assertion_is_refused_and_never_signs_in(tmp_path, database_url, saml_idp):
    idp = saml_idp
    async with console_server(tmp_path, database_url=database_url) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        writer = await session_for(server, ["writer"])
        browser = Browser()
        try:
            acs, answer = await idp_answer(server, writer)
            assert (await post_answer(writer, acs, answer)).status == 302
            response = await post_answer(writer, acs, answer)  # the same answer again: its request is used
            assert response.status == 403
            # the test's assertion, aimed at a fresh sign-in's request and signed again by the IdP
            acs, fresh = await start(browser, server, "corp")
            fresh_id = re.search(r'InResponseTo="([^"]+)"', decode(fresh)).group(1)
            old_id = re.search(r'InResponseTo="([^"]+)"', decode(answer)).group(1)
            status, _, page = await browser.follow("POST", acs, data={
                "SAMLResponse": encode(resign(idp, decode(answer).replace(old_id, fresh_id)))})
            assert status == 403 and "<code>saml-replay</code>" in page, page[:500]
            assert browser.cookie("reviewer_session") is None
        finally:
            await writer.close()
            await browser.close()
        store = server.app[SIGNIN_STORE]  # a response answering no request waiting is listed apart
        logged = sorted([*await store.signins(10), *await store.signins(10, unauthenticated=True)],
                        key=lambda e: e["at"], reverse=True)
        checks = [e["check"] for e in logged if not e["ok"]]
        assert checks == ["saml-replay", "saml-in-response-to"]


async def test_an_unknown_or_foreign_result_id_shows_nothing(tmp_path, database_url, saml_idp):
    idp = saml_idp
    async with console_server(tmp_path, database_url=database_url) as server:
        await put_saml(server, idp.connector("corp", server.url), idp)
        writer = await session_for(server, ["writer"])
        try:
            for query in ("?test=unknown", "?test=" + "x" * 200):
                async with writer.get(server.url + PAGE + query) as response:
                    assert response.status == 200 and 'id="tested"' not in await response.text()
            acs, answer = await idp_answer(server, writer)
            location = (await post_answer(writer, acs, answer)).headers["Location"]
            result = location.split("?test=", 1)[1]
            async with writer.get(f"{server.url}/console/connectors/oidcconnectors/mock?test={result}") as response:
                assert 'id="tested"' not in await response.text()  # another connector's page: not shown there
            async with writer.get(server.url + location) as response:  # nor used up there: its own page shows it
                assert 'id="tested"' in await response.text()
        finally:
            await writer.close()
