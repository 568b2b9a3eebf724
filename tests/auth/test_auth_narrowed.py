"""A grant narrowed by `accounts` allows only objects of those accounts (hostile: a holder of
`deliveries:write` on `acme*` must not redeliver a delivery that names no account, nor reach the
connectors, the sign-in log or the admin file's state, which belong to every account). Each
route that checks a permission, over HTTP, beside a role that reads deliveries everywhere."""

from __future__ import annotations

from bot.auth.access import access_from, grant_for
from bot.config.admin import load_admin_config
from tests.support.console_support import console_server, csrf_of, failed_delivery, session_for
from tests.support.oidc_support import ADMIN_TOKEN, connector_doc
from tests.support.server_support import Recorder

ADMIN_YAML = """\
access:
  roles:
    reader: {allow: ["deliveries:read"]}
    acme:   {allow: ["*"], accounts: ["acme*"]}
    config: {allow: ["config:read"]}
"""
OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"


def test_a_narrowed_grant_allows_no_object_without_an_account():
    admin, problems = load_admin_config(ADMIN_YAML, "admin.yaml")
    assert problems == []
    access = access_from(admin.data["access"])
    both, acme = grant_for(access, ["reader", "acme"]), grant_for(access, ["acme"])
    assert acme.allows("deliveries:write", "acme-corp") and acme.allows("connectors:write", "ACME")
    assert not acme.allows("deliveries:write", "other")
    assert not acme.allows("deliveries:write", None)  # a delivery that names no account
    assert not acme.allows("connectors:read") and not acme.allows("config:read")  # instance-wide objects
    assert acme.holds("deliveries:write") and acme.holds("connectors:read") and not grant_for(access, []).holds(
        "deliveries:read")
    assert both.allows("deliveries:read", None) and both.allows("deliveries:read", "other")  # `reader`: all
    assert not both.allows("deliveries:write", None)


async def _no_account_failure(server, name: str) -> dict:
    """A signed delivery GitHub would not send: it fails as invalid, naming no repository."""
    status, _ = await server.post("pull_request", {"action": "opened", "number": 1}, name)
    assert status == 202
    record = await server.wait_state(name, "failed")
    assert not record.get("repo")
    return record


async def test_a_narrowed_holder_reaches_only_objects_of_its_accounts(tmp_path):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, ADMIN_YAML) as server:
        await failed_delivery(server, recorder, "d-acme", repo="acme/app")
        await failed_delivery(server, recorder, "d-other", repo="other/app")
        await _no_account_failure(server, "d-none")
        holder = await session_for(server, ["reader", "acme"])
        try:
            async with holder.get(server.url + "/console/deliveries") as response:
                listing = await response.text()
            assert response.status == 200 and all(d in listing for d in ("d-acme", "d-other", "d-none"))
            for delivery, allowed in (("d-none", False), ("d-other", False), ("d-acme", True)):
                async with holder.get(f"{server.url}/console/deliveries/{delivery}") as response:
                    page = await response.text()
                assert response.status == 200 and ("Redeliver" in page) is allowed, delivery
                async with holder.post(f"{server.url}/console/deliveries/{delivery}/redeliver",
                                       data={"csrf": csrf_of(page)}, allow_redirects=False) as response:
                    assert (response.status == 303) is allowed, (delivery, response.status)
            assert await server.state("d-none") == "failed" and await server.state("d-other") == "failed"

            async with holder.get(server.url + "/console/") as response:  # the admin file is every account's
                page = await response.text()
            assert response.status == 200 and "admin.yaml" not in page
            everywhere = await session_for(server, ["reader", "config"], username="erin@example.com")
            async with everywhere.get(server.url + "/console/") as response:
                assert "admin.yaml" in await response.text()  # shown to config:read on every account
            await everywhere.close()
            for path in ("/console/connectors", "/console/signins", "/console/connectors/oidcconnectors/x",
                         OIDC_PATH, OIDC_PATH + "/x", "/v1/webapi/oidc/test/web?connector_id=x",
                         "/v1/webapi/saml/test/web?connector_id=x", "/api/config/other/app",
                         "/console/repos/other/app"):
                async with holder.get(server.url + path, allow_redirects=False) as response:
                    assert response.status == 403, (path, response.status)
            async with holder.put(server.url + OIDC_PATH + "/x", json=connector_doc("x", "https://i.example", server.url)) \
                    as response:
                assert response.status == 403
            async with holder.delete(server.url + OIDC_PATH + "/x") as response:
                assert response.status == 403
            async with holder.post(server.url + "/console/connectors/apply", data={"yaml": "x"}) as response:
                assert response.status == 403
            async with holder.post(server.url + "/console/repos/other/app/simulate", data={"number": "1"}) as response:
                assert response.status == 403
            async with holder.get(server.url + "/console/repos/acme/app") as response:
                assert response.status == 200  # its own account: allowed
            async with holder.get(server.url + "/api/config/acme/app") as response:
                assert response.status == 503  # allowed: it gets as far as needing GitHub, which this server lacks
        finally:
            await holder.close()
        async with server.http.get(server.url + OIDC_PATH, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) \
                as response:
            assert response.status == 200  # the break-glass token: every account and none
