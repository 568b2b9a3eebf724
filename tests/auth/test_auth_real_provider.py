"""Signing in through a real OpenID provider (oidc-provider-mock), end to end over HTTP: the
browser flow with a cookie jar, the session, and the roles deciding what the resource API allows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest

from bot.server.signin.routes import SIGNIN_STORE
from tests.support.oidc_support import (
    ADMIN_TOKEN,
    CLIENT_SECRET,
    Browser,
    Remote,
    connector_doc,
    put_connector,
    query_of,
    real_provider,
    signin_server,
)

ROOT = Path(__file__).resolve().parent.parent.parent
OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
ADMIN_YAML = """\
access:
  roles:
    admin: {allow: ["*"]}
    reader: {allow: ["connectors:read"]}
"""


async def add_user(server, issuer: str, sub: str, claims: dict) -> None:
    async with server.http.put(f"{issuer}/users/{sub}", json=claims) as response:
        assert response.status == 204


async def sign_in(browser: Browser, server, issuer: str, sub: str, connector: str = "mock",
                  redirect: str = "/console/repos") -> tuple[int, str, str]:
    status, url, _ = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id={connector}"
                                       f"&redirect_url={redirect}")
    assert url.startswith(issuer + "/oauth2/authorize"), url
    return await browser.follow("POST", url, data={"sub": sub})


async def test_a_browser_signs_in_and_its_roles_decide_the_api(tmp_path):
    with real_provider() as issuer:
        async with signin_server(tmp_path, ADMIN_YAML) as server:
            mappings = [{"claim": "groups", "value": "admins", "roles": ["admin"]},
                        {"claim": "groups", "value": "^team-(.*)$", "roles": ["$1"]}]
            await put_connector(server, connector_doc("mock", issuer, server.url, claims_to_roles=mappings))
            await add_user(server, issuer, "alice", {"email": "alice@example.com", "email_verified": True,
                                                     "groups": ["admins", "team-reader"]})
            await add_user(server, issuer, "bob", {"email": "bob@example.com", "groups": ["team-reader"]})
            alice, bob = Browser(), Browser()
            try:
                status, url, _ = await sign_in(alice, server, issuer, "alice")
                assert urlsplit(url).path == "/console/repos"
                sent = alice.hops[1]
                params = query_of(sent)
                assert params["code_challenge_method"] == "S256" and params["prompt"] == "select_account"
                assert params["nonce"] and params["state"]
                assert params["redirect_uri"] == server.url + "/v1/webapi/oidc/callback"
                async with alice.http.get(server.url + "/v1/webapi/session") as response:
                    session = await response.json()
                assert session["username"] == "alice@example.com"
                assert session["roles"] == ["admin", "reader"] and session["connector"] == "mock"
                assert "connectors:write" in session["permissions"]
                async with alice.http.get(server.url + OIDC_PATH) as response:
                    assert response.status == 200

                await sign_in(bob, server, issuer, "bob")
                async with bob.http.get(server.url + "/v1/webapi/session") as response:
                    assert (await response.json())["permissions"] == ["connectors:read"]
                async with bob.http.get(server.url + OIDC_PATH + "/mock") as response:
                    assert response.status == 200
                    assert (await response.json())["spec"]["client_secret"] == "<redacted>"
                doc = connector_doc("other", issuer, server.url)
                async with bob.http.put(server.url + OIDC_PATH + "/other", json=doc,
                                        headers={"Origin": server.url}) as response:
                    body = await response.json()
                assert response.status == 403 and body["kind"] == "Status" and body["reason"] == "Forbidden"
                assert "connectors:write" in body["message"]
            finally:
                await alice.close()
                await bob.close()


async def test_signed_out_and_signed_in_without_a_role(tmp_path):
    with real_provider() as issuer:
        async with signin_server(tmp_path) as server:
            await put_connector(server, connector_doc("mock", issuer, server.url))
            await add_user(server, issuer, "carol", {"email": "carol@example.com", "groups": ["interns"]})
            browser = Browser()
            try:
                async with browser.http.get(server.url + OIDC_PATH) as response:
                    assert response.status == 401
                status, url, body = await sign_in(browser, server, issuer, "carol")
                assert status == 403 and "no-roles" in body and "<code>groups</code>" in body
                assert "interns" not in body  # claim names, never values
                assert browser.cookie("reviewer_session") is None
                async with server.http.get(server.url + "/v1/webapi/session") as response:
                    assert response.status == 401
                entry = (await server.app[SIGNIN_STORE].signins())[0]
                assert entry["ok"] is False and entry["check"] == "no-roles" and entry["connector"] == "mock"
                assert entry["username"] == "carol@example.com" and "groups" in entry["claims"]
                assert "interns" not in json.dumps(entry)
            finally:
                await browser.close()


def start_serve(tmp_path: Path, private_key: str) -> tuple[subprocess.Popen, int, list[str]]:
    """`reviewer serve` as its own process; its log lines keep being collected on a thread."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT"))}
    env.update(PYTHONPATH=str(ROOT), GITHUB_WEBHOOK_SECRET="webhook-secret-for-tests", PORT="0",
               GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=private_key,
               REVIEWER_ADMIN_TOKEN=ADMIN_TOKEN, REVIEWER_DATABASE_URL=f"sqlite:///{tmp_path / 'reviewer.db'}")
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=tmp_path, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("{") and json.loads(line)["msg"] == "listening":
            threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
            return proc, json.loads(line)["port"], lines
    proc.wait()
    raise AssertionError("the server stopped before listening:\n" + "".join(lines))


@pytest.mark.slow  # a `reviewer serve` process of its own
async def test_reviewer_serve_signs_a_browser_in_and_logs_no_secret(tmp_path, app_private_key):
    proc, port, lines = start_serve(tmp_path, app_private_key)
    url = f"http://127.0.0.1:{port}"
    try:
        with real_provider() as issuer:
            async with aiohttp.ClientSession() as http:
                server = Remote(url, http)
                await put_connector(server, connector_doc("mock", issuer, url))
                await add_user(server, issuer, "dana", {"email": "dana@example.com", "groups": ["admins"]})
            browser = Browser()
            try:
                await sign_in(browser, server, issuer, "dana")
                token = browser.cookie("reviewer_session")
                assert token
                async with browser.http.get(url + OIDC_PATH) as response:
                    assert response.status == 200
            finally:
                await browser.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    log = "".join(lines)
    assert "signed in: connector=mock username=dana@example.com" in log  # the log line names who
    for secret in (token, CLIENT_SECRET, ADMIN_TOKEN):
        assert secret not in log
