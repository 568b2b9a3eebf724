"""`GET /` (bot/server/home.py): what the server is, its version, the console, whether the GitHub
App is configured and from where — never a secret, nor a path on the server."""

from __future__ import annotations

from importlib import metadata

from bot.github import credentials
from bot.github.credentials import AppCredentials
from tests.support.server_support import Recorder, running_server


async def test_the_home_page_says_what_this_is_and_that_the_app_is_configured(tmp_path, app_private_key):
    store = tmp_path / "secrets"
    credentials.write(store, AppCredentials(4242, app_private_key, "whsec-home-test", "Iv1.x", "client-secret-home"))
    async with running_server(tmp_path, Recorder(), REVIEWER_SECRETS_DIR=str(store),
                              REVIEWER_PUBLIC_URL="https://reviewer.example.com") as server:
        async with server.http.get(server.url + "/") as response:
            assert response.status == 200 and response.content_type == "text/html"
            assert "default-src 'none'" in response.headers["Content-Security-Policy"]
            body = await response.text()
    assert f"Reviewer {metadata.version('reviewer')}" in body
    assert '<a href="/console/">The admin console</a>' in body
    assert "configured (from the secret store (written by reviewer setup))" in body
    assert "https://reviewer.example.com/webhook" in body
    for secret in ("whsec-home-test", "client-secret-home", app_private_key.splitlines()[1], str(store)):
        assert secret not in body


async def test_without_an_app_the_page_says_how_to_configure_one(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        async with server.http.get(server.url + "/") as response:
            assert response.status == 200
            body = await response.text()
    assert "<b>not configured</b>: run <code>reviewer setup</code>" in body
    assert f"{server.url}/webhook" in body
