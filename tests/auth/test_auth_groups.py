"""Directory group lookups: an Entra ID token or assertion that points to its groups (the overage)
gets them from Graph (a local double over HTTP) with the connector's own credentials, every page;
the URL named in the token is never fetched; a failed lookup refuses the sign-in saying why."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from cryptography.hazmat.primitives import serialization

from bot.server.signin.routes import SIGNIN_STORE
from tests.support.directory_doubles import (
    CLIENT_ID,
    CLIENT_SECRET,
    GoogleDirectoryDouble,
    GraphDouble,
    Tripwire,
    security_groups,
)
from tests.support.oidc_support import Browser, HostileProvider, connector_doc, new_rsa, put_connector, signin_server
from tests.support.saml_support import SamlIdP, post_response, put_saml, require_xmlsec, start

ADMIN_YAML = """\
access:
  roles:
    admin: {allow: ["*"]}
    reader: {allow: ["connectors:read"]}
"""
OID = "0f1e2d3c-user"
TENANT = "72f988bf-tenant"
MAPPING = [{"claim": "groups", "value": "g-admins", "roles": ["admin"]}]


@asynccontextmanager
async def oidc_scene(tmp_path, graph: GraphDouble, tripwire: Tripwire, **provider_spec) -> AsyncIterator:
    claims = {"oid": OID, "tid": TENANT, "_claim_names": {"groups": "src1"},
              "_claim_sources": {"src1": {"endpoint": tripwire.url + f"/v1.0/users/{OID}/getMemberObjects"}}}
    provider = HostileProvider(claims=claims, drop=("groups",), client_secret=CLIENT_SECRET,
                               other_clients={CLIENT_ID: CLIENT_SECRET})
    async with provider.serving(), signin_server(tmp_path, ADMIN_YAML, REVIEWER_DIRECTORY_URL=graph.url) as server:
        spec = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "claims_to_roles": MAPPING,
                "directory_id_groups_provider": {"graph_endpoint": "https://graph.microsoft.us", **provider_spec}}
        doc = connector_doc("entra", provider.url, server.url, **spec)
        await put_connector(server, doc)
        browser = Browser()
        try:
            yield server, browser
        finally:
            await browser.close()


async def session_of(server, browser: Browser) -> dict:
    async with browser.http.get(server.url + "/v1/webapi/session") as response:
        return await response.json()


async def test_oidc_overage_groups_come_from_graph_over_every_page(tmp_path):
    graph = GraphDouble(groups={OID: security_groups("g-1", "g-2", "g-3", "g-4", "g-admins")})
    graph.groups[OID].append({"id": "g-mail", "securityEnabled": False})  # not a security group
    async with graph.serving(), Tripwire().serving() as tripwire, \
            oidc_scene(tmp_path, graph, tripwire) as (server, browser):
        status, url, page = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=entra")
        assert url == server.url + "/console/", page[:400]
        assert (await session_of(server, browser))["roles"] == ["admin"]
    assert graph.pages_served == 3  # 6 objects, 2 a page
    assert graph.token_requests[0]["tenant"] == TENANT
    assert graph.token_requests[0]["scope"] == "https://graph.microsoft.us/.default"  # the cloud's audience
    assert tripwire.hits == 0


async def test_a_next_page_link_off_graph_is_never_followed(tmp_path):
    async with Tripwire().serving() as tripwire:
        graph = GraphDouble(groups={OID: security_groups("g-1", "g-2", "g-admins")},
                            foreign_next=tripwire.url + "/steal")
        async with graph.serving(), oidc_scene(tmp_path, graph, tripwire) as (server, browser):
            status, url, page = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=entra")
            assert status == 502 and "<code>groups-lookup</code>" in page and "leaves graph_endpoint" in page
            assert browser.cookie("reviewer_session") is None
    assert tripwire.hits == 0


@pytest.mark.parametrize(("graph_kwargs", "words"), [
    ({"fail_status": 403}, "GroupMember.Read.All"),
    ({"groups": {}}, "no role"),
])
async def test_a_failed_lookup_refuses_and_says_why(tmp_path, graph_kwargs, words):
    graph = GraphDouble(**graph_kwargs)
    async with graph.serving(), Tripwire().serving() as tripwire, \
            oidc_scene(tmp_path, graph, tripwire) as (server, browser):
        status, url, page = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=entra")
        assert status in (403, 502) and words in page, page[:600]
        assert CLIENT_SECRET not in page and "graph-token" not in page
        assert browser.cookie("reviewer_session") is None
        entry = (await server.app[SIGNIN_STORE].signins())[0]
        assert entry["username"] == "alice@example.com" and entry["ok"] is False


async def test_disabled_provider_looks_nothing_up(tmp_path):
    graph = GraphDouble(groups={OID: security_groups("g-admins")})
    async with graph.serving(), Tripwire().serving() as tripwire, \
            oidc_scene(tmp_path, graph, tripwire, disabled=True) as (server, browser):
        status, url, page = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=entra")
        assert "<code>no-roles</code>" in page
    assert graph.token_requests == [] and tripwire.hits == 0


async def test_saml_groups_link_gets_groups_with_the_oauth_credentials(tmp_path):
    require_xmlsec()
    graph = GraphDouble(groups={OID: security_groups("g-1", "g-2", "g-admins")})
    async with graph.serving(), Tripwire().serving() as tripwire:
        idp = SamlIdP(attributes={"http://schemas.microsoft.com/claims/groups.link": [tripwire.url + "/groups"],
                                  "http://schemas.microsoft.com/identity/claims/tenantid": [TENANT],
                                  "http://schemas.microsoft.com/identity/claims/objectidentifier": [OID]})
        async with idp.serving(), signin_server(tmp_path, ADMIN_YAML, REVIEWER_DIRECTORY_URL=graph.url) as server:
            doc = idp.connector("entra", server.url, attributes_to_roles=[
                {"name": "groups", "value": "g-admins", "roles": ["admin"]}],
                credentials={"oauth": {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}},
                directory_id_groups_provider={})
            await put_saml(server, doc, idp)
            browser = Browser()
            try:
                acs, response = await start(browser, server, "entra")
                status, url, page = await post_response(browser, acs, response)
                assert url == server.url + "/console/repos", page[:500]
                assert (await session_of(server, browser))["roles"] == ["admin"]
            finally:
                await browser.close()
    assert graph.pages_served == 2 and graph.token_requests[0]["tenant"] == TENANT
    assert tripwire.hits == 0


async def test_google_workspace_groups_come_from_the_directory_api(tmp_path):
    key = new_rsa("google service account")
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    directory = GoogleDirectoryDouble(public_pem=key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
        groups={"alice@example.com": ["eng@example.com", "ops@example.com", "reviewer-admins@example.com"]})
    account = {"type": "service_account", "client_email": directory.client_email, "private_key": pem,
               "token_uri": "https://oauth2.googleapis.com/token"}
    key_file = tmp_path / "sa.json"
    key_file.write_text(json.dumps(account))
    provider = HostileProvider(drop=("groups",))
    async with directory.serving(), provider.serving(), \
            signin_server(tmp_path, ADMIN_YAML, REVIEWER_DIRECTORY_URL=directory.url) as server:
        mapping = [{"claim": "groups", "value": "reviewer-admins@example.com", "roles": ["admin"]}]
        doc = connector_doc("google", provider.url, server.url, claims_to_roles=mapping,
                            cloud_service_account_uri=f"file://{key_file}", cloud_admin_email="admin@example.com")
        await put_connector(server, doc)
        browser = Browser()
        try:
            status, url, page = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=google")
            assert url == server.url + "/console/", page[:500]
            assert (await session_of(server, browser))["roles"] == ["admin"]
        finally:
            await browser.close()
    grant = directory.grants[0]
    assert grant["sub"] == "admin@example.com" and "admin.directory.group.readonly" in grant["scope"]
    assert directory.pages_served == 2


async def test_a_google_lookup_with_a_key_the_directory_refuses_says_why(tmp_path):
    directory = GoogleDirectoryDouble(public_pem=new_rsa("google service account").public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    pem = new_rsa("another service account").private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()).decode()
    provider = HostileProvider(drop=("groups",))
    async with directory.serving(), provider.serving(), \
            signin_server(tmp_path, ADMIN_YAML, REVIEWER_DIRECTORY_URL=directory.url) as server:
        doc = connector_doc("google", provider.url, server.url, cloud_admin_email="admin@example.com",
                            cloud_service_account=json.dumps({"client_email": directory.client_email,
                                                              "private_key": pem}))
        await put_connector(server, doc)
        browser = Browser()
        try:
            status, url, page = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=google")
        finally:
            await browser.close()
        assert status == 502 and "<code>groups-lookup</code>" in page and "Google Workspace" in page
        assert "invalid_grant" in page and "PRIVATE KEY" not in page
