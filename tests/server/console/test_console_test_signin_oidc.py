"""The console's "Test sign-in" for OIDC connectors over HTTP, against a provider of our own that
sends what a test page must not echo: a distributed claim's access token, a flood of claims and
values far too long to keep. What is shown is bounded, says how much was left out, and never holds
the token; no session is made."""

from __future__ import annotations

import re
from urllib.parse import urlencode

from bot.server.signin.routes import SIGNIN_STORE
from tests.support.console_support import console_server, session_for
from tests.support.oidc_support import HostileProvider, connector_doc, put_connector

PAGE = "/console/connectors/oidcconnectors/idp"
TOKEN = "distributed-claim-access-token-0123456789"


async def test_an_oidc_test_sign_in_shows_bounded_claims_and_never_a_claim_source_token(tmp_path):
    flood = {f"list{n:02}": [f"{n}-{i}-" + "v" * 250 for i in range(60)] for n in range(20)}
    provider = HostileProvider(claims={
        "_claim_names": {"groups": "src1"},
        "_claim_sources": {"src1": {"endpoint": "https://claims.example/groups", "access_token": TOKEN}},
        "department": "platform", **flood})
    async with provider.serving(), console_server(tmp_path) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url))
        writer = await session_for(server, ["writer"])
        try:
            url = f"{server.url}/v1/webapi/oidc/test/web?" + urlencode({"connector_id": "idp", "redirect_url": PAGE})
            async with writer.get(url) as response:  # our server → the provider → our callback → the page
                page = await response.text()
                assert response.status == 200 and str(response.url).startswith(server.url + PAGE + "?test=")
            assert "Test sign-in: alice@example.com" in page and "<code>department</code>" in page
            assert TOKEN not in page and "_claim_sources" not in page and "_claim_names" not in page
            assert "v" * 201 not in page and "-50-" not in page  # each value cut, each list too
            shown = page.count("<code>list")
            assert 0 < shown < 20  # the values together are bounded: the rest is counted, not kept
            omitted = re.search(r"(\d+) more claims came back and are not shown", page)
            assert omitted and int(omitted.group(1)) >= 20 - shown  # the lists left out, and names after them
            store = server.app[SIGNIN_STORE]
            assert await store.delete_connector_sessions("idp") == 0  # no session was made
            entry = next(e for e in await store.signins(5) if e["flow"] == "test")
            assert entry["ok"] and entry["kind"] == "oidc" and TOKEN not in repr(entry)
        finally:
            await writer.close()
