"""Connectors in the console over HTTP: the console's "Apply" and the resource API's PUT give one
document the same answer (the same refusals, in the same words); the YAML shown keeps its
author's order and comments, with the stored values (and secrets redacted); the empty state offers
templates for common identity providers, the documented examples; "Delete" deletes the connector
and ends its sessions, behind the CSRF token. On SQLite and on PostgreSQL (`database_url`)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import aiohttp

from bot.auth.sessions import token_key
from bot.server.console.connectors import TEMPLATE_DIR, TEMPLATES
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.console_support import console_server, csrf_of, session_for
from tests.support.oidc_support import ADMIN_TOKEN, CLIENT_SECRET

ROOT = Path(__file__).resolve().parent.parent.parent.parent
API = "/apis/resources.service.dev/v3/oidcconnectors/"
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

AUTHORED = f"""\
# Corp's IdP: keep this comment
apiVersion: resources.service.dev/v3
kind: ServiceOIDCConnector
metadata:
  name: corp
spec:
  # who may sign in
  claims_to_roles: [{{claim: groups, value: admins, roles: [admin]}}]
  issuer_url: https://idp.example.com   # the issuer
  client_secret: {CLIENT_SECRET}
  client_id: reviewer
  redirect_url: ["https://reviewer.example.com/v1/webapi/oidc/callback"]
"""

# Documents the two ways in must refuse alike: a schema error, two, a bad envelope, a wrong kind.
REFUSED = [
    AUTHORED.replace("https://idp.example.com", "12345"),
    AUTHORED.replace("client_id: reviewer", "client_id: 12").replace("  # who may sign in\n", "  colour: blue\n"),
    AUTHORED.replace("resources.service.dev/v3", "resources.service.dev/v9"),
    AUTHORED.replace("kind: ServiceOIDCConnector\n", "kind: ServiceOIDCConnector\nstatus: {conditions: 3}\nextra: 1\n"),
    AUTHORED.replace("client_id: reviewer", "client_id: [reviewer"),  # not YAML
    AUTHORED.replace("client_id: reviewer", "client_id: reviewer\n  client_id: again"),  # a duplicate key
    AUTHORED + "---\n" + AUTHORED,  # two documents
    AUTHORED.replace(CLIENT_SECRET, "<redacted>"),  # a placeholder with nothing stored to keep
]
# Documents whose shape is right and whose reconcile step finds a problem: both ways store them,
# their condition False (the console once refused these while the API stored them).
STORED_FAILING = [
    AUTHORED.replace(CLIENT_SECRET, "secret://corp/missing"),
    AUTHORED.replace("https://idp.example.com", "not a url"),
    AUTHORED.replace("  claims_to_roles: [{claim: groups, value: admins, roles: [admin]}]\n", ""),
]


def _textarea(page: str) -> str:
    found = re.search(r'<textarea id="yaml" name="yaml"[^>]*>(.*?)</textarea>', page, re.S)
    assert found, page
    return html.unescape(found.group(1))


def _console_errors(page: str) -> list[tuple[str, str]]:
    """(pointer, message) of each error the console lists."""
    items = re.findall(r'<li><a href="#line-\d+">line \d+, column \d+</a>(?: \(<code>(.*?)</code>\))?: '
                       r'[\w-]+ — (.*?)</li>', page)
    return sorted((html.unescape(p), html.unescape(m)) for p, m in items)


async def test_the_console_and_the_api_refuse_a_document_alike(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        writer = await session_for(server, ["writer"])
        try:
            async with writer.get(server.url + "/console/connectors") as response:
                csrf = csrf_of(await response.text())
            for text in REFUSED:
                async with writer.post(server.url + "/console/connectors/apply",
                                       data={"csrf": csrf, "yaml": text}) as response:
                    assert response.status == 422
                    console = _console_errors(await response.text())
                async with server.http.put(server.url + API + "corp", data=text.encode(),
                                           headers={**AUTH, "Content-Type": "application/yaml"}) as response:
                    answer = await response.json()
                    assert response.status in (400, 422), answer
                api = sorted((c["field"], c["message"]) for c in answer.get("details", {}).get("causes", [])) \
                    if response.status == 422 else [(console[0][0], answer["message"])]
                assert console and console == api, (text, console, api)
                assert CLIENT_SECRET not in str(console)
            async with server.http.get(server.url + API + "corp", headers=AUTH) as response:
                assert response.status == 404  # neither way stored any of them
        finally:
            await writer.close()


async def test_a_document_the_api_stores_with_a_failed_condition_the_console_stores_too(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        writer = await session_for(server, ["writer"])
        try:
            async with writer.get(server.url + "/console/connectors") as response:
                csrf = csrf_of(await response.text())
            for n, text in enumerate(STORED_FAILING):
                text = text.replace("name: corp", f"name: corp{n}")
                async with writer.post(server.url + "/console/connectors/apply", allow_redirects=False,
                                       data={"csrf": csrf, "yaml": text}) as response:
                    assert response.status == 303, (text, await response.text())
                async with server.http.get(server.url + API + f"corp{n}", headers=AUTH) as response:
                    by_console = await response.json()
                async with server.http.put(server.url + API + f"api{n}", data=text.replace(f"corp{n}", f"api{n}"),
                                           headers={**AUTH, "Content-Type": "application/yaml"}) as response:
                    by_api = await response.json()
                ready = [[(c["status"], c["reason"], c["message"].replace(f"api{n}", f"corp{n}"))
                          for c in obj["status"]["conditions"]] for obj in (by_console, by_api)]
                assert ready[0] == ready[1] and ("False" in str(ready[0])), (text, ready)
                async with writer.get(server.url + f"/console/connectors/oidcconnectors/corp{n}") as response:
                    page = await response.text()
                assert "tone-bad state-False" in page  # the page shows the failed condition
        finally:
            await writer.close()


async def test_the_yaml_keeps_its_authors_order_and_comments(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        writer = await session_for(server, ["writer"])
        try:
            async with writer.get(server.url + "/console/connectors") as response:
                csrf = csrf_of(await response.text())
            async with writer.post(server.url + "/console/connectors/apply",
                                   data={"csrf": csrf, "yaml": AUTHORED}) as response:
                assert response.status == 200
                shown = _textarea(await response.text())
            assert CLIENT_SECRET not in shown and "client_secret: <redacted>" in shown
            assert shown.startswith("# Corp's IdP: keep this comment\napiVersion:")
            assert "  # who may sign in\n  claims_to_roles:" in shown and "idp.example.com   # the issuer" in shown
            keys = re.findall(r"^  (\w+):", shown, re.M)
            assert keys == ["name", "resourceVersion", "claims_to_roles", "issuer_url", "client_secret", "client_id",
                            "redirect_url"]

            # changed through the API: the console shows the new value in the author's layout
            async with server.http.get(server.url + API + "corp", headers=AUTH) as response:
                obj = await response.json()
            assert "keep this comment" not in str(obj) and "consoleSource" not in obj  # the kept text is the console's
            obj["spec"]["claims_to_roles"][0]["value"] = "owners"
            async with server.http.put(server.url + API + "corp", json=obj, headers=AUTH) as response:
                assert response.status == 200
            async with writer.get(server.url + "/console/connectors/oidcconnectors/corp") as response:
                again = _textarea(await response.text())
            async with server.http.get(server.url + API + "corp", headers=AUTH) as response:
                version = (await response.json())["metadata"]["resourceVersion"]
            assert "[{claim: groups, value: owners, roles: [admin]}]" in again and "# the issuer" in again
            assert re.search(rf"resourceVersion: '?{version}'?\n", again), again  # the version it has now
            # applying the shown text back changes nothing and keeps the stored secret
            async with writer.post(server.url + "/console/connectors/apply", allow_redirects=False,
                                   data={"csrf": csrf, "yaml": again}) as response:
                assert response.status == 303, await response.text()
            async with server.http.get(server.url + API + "corp", headers=AUTH) as response:
                assert (await response.json())["metadata"]["generation"] == 2
        finally:
            await writer.close()


def test_the_templates_are_the_documented_examples():
    assert {"okta-oidc", "entra-id-oidc", "google-workspace-oidc", "keycloak-oidc", "okta-saml"} == set(TEMPLATES)
    for name in TEMPLATES:
        assert (TEMPLATE_DIR / f"{name}.yaml").read_text() == \
            (ROOT / "docs" / "examples" / "connectors" / f"{name}.yaml").read_text(), name


async def test_the_empty_state_offers_templates_that_fill_the_editor(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        writer = await session_for(server, ["writer"], connector="mock")
        try:
            await server.http.delete(server.url + API + "mock", headers=AUTH)  # no connector at all
            async with writer.get(server.url + "/console/connectors", allow_redirects=False) as response:
                assert response.status == 303  # its session went with its connector
        finally:
            await writer.close()
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as admin:
            async with admin.post(server.url + "/console/login/token", headers={"Origin": server.url},
                                  data={"token": ADMIN_TOKEN, "next": "/console/connectors"}) as response:
                page = await response.text()
            assert "No connector yet" in page
            for label in ("Okta (OIDC)", "Microsoft Entra ID (OIDC)", "Google Workspace (OIDC)", "Keycloak (OIDC)",
                          "A SAML 2.0 identity provider"):
                assert label in page, label
            async with admin.get(server.url + "/console/connectors?template=keycloak-oidc") as response:
                page = await response.text()
            assert _textarea(page) == (TEMPLATE_DIR / "keycloak-oidc.yaml").read_text()
            async with admin.get(server.url + "/console/connectors?template=../../etc/passwd") as response:
                assert _textarea(await response.text()) == ""


async def test_delete_removes_the_connector_and_its_sessions_behind_the_csrf_token(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        writer = await session_for(server, ["writer"], connector="mock", username="ada@example.com")
        signed_in = await session_for(server, ["auditor"], connector="corp", username="erin@example.com")
        try:
            async with writer.get(server.url + "/console/connectors/oidcconnectors/corp") as response:
                page = await response.text()
            assert 'data-confirm="Delete the connector corp? Everyone signed in through it is signed out."' in page
            url = server.url + "/console/connectors/oidcconnectors/corp/delete"
            async with writer.post(url, data={}) as response:
                assert response.status == 403  # no CSRF token
            async with signed_in.post(url, data={"csrf": csrf_of(page)}) as response:
                assert response.status == 403  # not a writer (and not this session's token)
            async with writer.post(url, data={"csrf": csrf_of(page)}, allow_redirects=False) as response:
                assert response.status == 303 and response.headers["Location"] == "/console/connectors?deleted=corp"
            async with server.http.get(server.url + API + "corp", headers=AUTH) as response:
                assert response.status == 404
            async with writer.get(server.url + "/console/connectors?deleted=corp") as response:
                assert "The connector corp is deleted" in await response.text()
            async with writer.get(server.url + "/console/connectors?deleted=mock") as response:
                assert "is deleted" not in await response.text()  # it is there: a link cannot say otherwise
            erin = next(c.value for c in signed_in.cookie_jar if c.key == "reviewer_session")
            assert await server.app[SIGNIN_STORE].get_session(token_key(erin)) is None
            async with writer.post(url, data={"csrf": csrf_of(page)}) as response:
                assert response.status == 404  # gone already
        finally:
            await writer.close()
            await signed_in.close()
