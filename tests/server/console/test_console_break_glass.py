"""The break-glass REVIEWER_ADMIN_TOKEN, hostile: guesses are throttled per address, on the
console's form and as a bearer token, the right token included once an address is throttled; a
console session opened with it is in the audit log; behind a trusted proxy the address is the
client's (REVIEWER_TRUSTED_PROXIES), in the sign-in log and the audit log."""

from __future__ import annotations

import aiohttp

from bot.auth.throttle import MAX_FAILURES, WINDOW, Throttle
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.console_support import console_server, session_for
from tests.support.oidc_support import ADMIN_TOKEN

CLIENT, OTHER = "198.51.100.7", "198.51.100.8"


async def _form(http: aiohttp.ClientSession, url: str, token: str, client: str) -> aiohttp.ClientResponse:
    async with http.post(url + "/console/login/token", data={"token": token, "next": "/console/"},
                         headers={"Origin": url, "X-Forwarded-For": f"203.0.113.9, {client}"},
                         allow_redirects=False) as response:
        await response.read()
        return response


async def test_the_console_form_is_throttled_per_address_and_a_sign_in_is_audited(tmp_path):
    async with console_server(tmp_path, REVIEWER_TRUSTED_PROXIES="127.0.0.1/32") as server, \
            aiohttp.ClientSession() as http:
        for _ in range(MAX_FAILURES):
            response = await _form(http, server.url, "wrong-token", CLIENT)
            assert response.status == 303 and "error=token" in response.headers["Location"]
        refused = await _form(http, server.url, ADMIN_TOKEN, CLIENT)  # the right one, but not compared now
        assert refused.status == 429 and 0 < int(refused.headers["Retry-After"]) <= WINDOW
        assert "reviewer_session" not in refused.cookies
        other = await _form(http, server.url, ADMIN_TOKEN, OTHER)  # another address is not held back
        assert other.status == 303 and other.headers["Location"] == "/console/"
        async with http.get(server.url + "/v1/audit?action=signin.break-glass",
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as answer:
            [entry] = (await answer.json())["entries"]
        assert (entry["actor"], entry["ip"], entry["target"]) == ("break-glass token", OTHER, "console session")
        signins = await server.app[SIGNIN_STORE].signins(50)
    assert {s.get("ip") for s in signins} == {CLIENT, OTHER}  # the client's, not the proxy's


async def test_bearer_guesses_are_throttled_the_right_token_included(tmp_path):
    async with console_server(tmp_path) as server, aiohttp.ClientSession() as http:
        statuses = []
        for _ in range(MAX_FAILURES):
            async with http.get(server.url + "/v1/audit", headers={"Authorization": "Bearer guess"}) as response:
                statuses.append(response.status)
        assert statuses == [401] * (MAX_FAILURES - 1) + [429]  # the last guess made the address throttled
        async with http.get(server.url + "/v1/audit", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
            assert response.status == 429 and int(response.headers["Retry-After"]) > 0
            assert "too many failed attempts at the admin token" in (await response.json())["message"]


def test_the_throttle_forgets_failures_past_its_window_and_holds_a_bounded_number_of_addresses():
    now = [0.0]
    throttle = Throttle(max_failures=3, window=10, clock=lambda: now[0], max_addresses=2)
    for _ in range(3):
        assert throttle.wait("a") is None
        throttle.failed("a")
    assert throttle.wait("a") == 10 and throttle.wait("b") is None
    now[0] = 9.5
    assert throttle.wait("a") == 1
    now[0] = 10.0
    assert throttle.wait("a") is None  # the window passed
    for address in ("a", "b", "c"):
        throttle.failed(address)
    assert len(throttle._failures) == 2 and "a" not in throttle._failures


async def test_refusals_of_unauthenticated_requests_are_listed_apart_from_real_entries(tmp_path):
    """A login started with no such connector and a SAML response nobody asked for can be sent by
    anyone, any number of times: the console lists them apart; a guess at the token stays listed."""
    async with console_server(tmp_path) as server, aiohttp.ClientSession() as http:
        assert (await _form(http, server.url, "wrong-token", CLIENT)).status == 303
        for _ in range(3):
            async with http.get(server.url + "/v1/webapi/oidc/login/web?connector_id=nope&redirect_url=/") as r:
                assert r.status == 404
            async with http.post(server.url + "/v1/webapi/saml/acs", data={"SAMLResponse": "bm90IHhtbA=="}) as r:
                assert r.status >= 400
        store = server.app[SIGNIN_STORE]
        real = await store.signins(50)
        noise = await store.signins(50, unauthenticated=True)
        admin = await session_for(server, ["admin"], username="ada@example.com")
        try:
            async with admin.get(server.url + "/console/signins") as response:
                listed = await response.text()
            async with admin.get(server.url + "/console/signins?outcome=unauthenticated") as response:
                apart = await response.text()
        finally:
            await admin.close()
    assert [(e["kind"], e["check"]) for e in real] == [("token", "token")]
    assert len(noise) == 6 and all(e["unauthenticated"] for e in noise)
    assert "nope" not in listed and "refused: token" in listed
    assert "nope" in apart
