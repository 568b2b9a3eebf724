"""A session lives only as long as its connector: deleted, or failing its reconcile, the connector
takes its sessions with it (hostile: an administrator removes a compromised provider and expects
everyone who signed in through it to be out at once). Over HTTP, on both stores."""

from __future__ import annotations

import pytest

from tests.oidc_support import ADMIN_TOKEN, Browser, HostileProvider, connector_doc, put_connector, signin_server

OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'reviewer.db'}"
    return request.getfixturevalue("pg_url")


async def _session_status(server, browser: Browser, token: str | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with browser.http.get(server.url + "/v1/webapi/session", headers=headers) as response:
        return response.status


async def _sign_in(server, provider, browser: Browser) -> str:
    await put_connector(server, connector_doc("idp", provider.url, server.url))
    await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=idp")
    token = browser.cookie("reviewer_session")
    assert token, browser.hops
    assert await _session_status(server, browser) == 200
    return token


async def test_deleting_the_connector_ends_its_sessions(tmp_path, database):
    provider = HostileProvider(claims={"groups": ["admins"]})
    async with provider.serving(), signin_server(tmp_path, REVIEWER_DATABASE_URL=database) as server:
        browser = Browser()
        try:
            token = await _sign_in(server, provider, browser)
            async with server.http.delete(f"{server.url}{OIDC_PATH}/idp", headers=ADMIN) as response:
                assert response.status == 200
            assert await _session_status(server, browser) == 401
            assert await _session_status(server, browser, token) == 401
            # A new connector of the same name does not bring the old sessions back.
            await put_connector(server, connector_doc("idp", provider.url, server.url))
            assert await _session_status(server, browser, token) == 401
        finally:
            await browser.close()


async def test_a_connector_that_stops_reconciling_stops_honouring_sessions(tmp_path, database):
    provider = HostileProvider(claims={"groups": ["admins"]})
    async with provider.serving(), signin_server(tmp_path, REVIEWER_DATABASE_URL=database) as server:
        browser = Browser()
        try:
            token = await _sign_in(server, provider, browser)
            broken = connector_doc("idp", provider.url, server.url, client_secret="secret://idp/absent")
            async with server.http.put(f"{server.url}{OIDC_PATH}/idp", json=broken, headers=ADMIN) as response:
                assert response.status == 200
            assert await _session_status(server, browser, token) == 401
            await put_connector(server, connector_doc("idp", provider.url, server.url))  # fixed again
            assert await _session_status(server, browser, token) == 200
        finally:
            await browser.close()
