"""A session lives only as long as its connector: deleted, or failing its reconcile, the connector
takes its sessions with it (hostile: an administrator removes a compromised provider and expects
everyone who signed in through it to be out at once). Over HTTP, on both stores."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import aiohttp
import pytest

from tests.support.oidc_support import (
    ADMIN_TOKEN,
    Browser,
    HostileProvider,
    connector_doc,
    put_connector,
    signin_server,
)

pytestmark = pytest.mark.slow  # a `reviewer serve` process of its own: `make test-fast` leaves it out


OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
ROOT = Path(__file__).resolve().parent.parent.parent


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


def _serve(tmp_path, private_key: str, admin_token: str | None):
    """`reviewer serve` as its own process on one SQLite file, with this admin token (None: unset)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT"))}
    env.update(PYTHONPATH=str(ROOT), GITHUB_WEBHOOK_SECRET="webhook-secret-for-tests", PORT="0",
               GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=private_key,
               REVIEWER_DATABASE_URL=f"sqlite:///{tmp_path / 'reviewer.db'}")
    if admin_token is not None:
        env["REVIEWER_ADMIN_TOKEN"] = admin_token
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=tmp_path, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("{") and json.loads(line)["msg"] == "listening":
            threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
            return proc, f"http://127.0.0.1:{json.loads(line)['port']}", lines
    proc.wait()
    raise AssertionError("the server stopped before listening:\n" + "".join(lines))


def _stop(proc) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0


async def _console_sign_in(http, url: str, admin_token: str) -> str:
    """The console's break-glass form; returns the session cookie it sets."""
    async with http.post(url + "/console/login/token", data={"token": admin_token, "next": "/console/"},
                         headers={"Origin": url}, allow_redirects=False) as response:
        assert response.status == 303 and response.headers["Location"] == "/console/", await response.text()
        return response.cookies["reviewer_session"].value


async def _status(url: str, cookie: str, path: str = "/v1/webapi/session") -> tuple[int, str]:
    async with aiohttp.ClientSession(cookies={"reviewer_session": cookie}) as http:
        async with http.get(url + path, allow_redirects=False) as response:
            return response.status, response.headers.get("Location", "")


async def test_rotating_the_admin_token_ends_console_sessions_opened_with_the_old_one(tmp_path, app_private_key):
    old, new = "old-break-glass-token-1c9d-0123456789ab", "new-break-glass-token-77ab-0123456789ab"
    proc, url, lines = _serve(tmp_path, app_private_key, old)
    try:
        async with aiohttp.ClientSession() as http:
            kept = await _console_sign_in(http, url, old)
        assert await _status(url, kept) == (200, "")
        assert await _status(url, kept, "/console/connectors") == (200, "")
    finally:
        _stop(proc)
    with sqlite3.connect(tmp_path / "reviewer.db") as db:  # the session is bound to a hash, not the token
        stored = " ".join(row[0] for row in db.execute("SELECT body FROM auth_sessions"))
    assert stored and old not in stored and hashlib.sha256(old.encode()).hexdigest() not in stored

    proc, url, more = _serve(tmp_path, app_private_key, old)  # the same token: the session survives a restart
    try:
        assert await _status(url, kept) == (200, "")
    finally:
        _stop(proc)

    proc, url, more = _serve(tmp_path, app_private_key, new)  # rotated: the old token's session has ended
    try:
        assert await _status(url, kept) == (401, "")
        status, location = await _status(url, kept, "/console/connectors")
        assert status == 303 and location.startswith("/console/login"), (status, location)
        async with aiohttp.ClientSession() as http:
            renewed = await _console_sign_in(http, url, new)
        assert await _status(url, renewed) == (200, "")
    finally:
        _stop(proc)

    proc, url, rest = _serve(tmp_path, app_private_key, None)  # unset: no break-glass session at all
    try:
        assert await _status(url, renewed) == (401, "")
        assert await _status(url, kept) == (401, "")
    finally:
        _stop(proc)
    log = "".join(lines + more + rest)
    assert old not in log and new not in log
