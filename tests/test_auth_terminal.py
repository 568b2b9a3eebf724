"""Terminal sign-in: the client-redirect rules (a table, after Teleport's cases), the console
endpoint refusing before any provider is contacted, and `reviewer login` / `reviewer logout` run
as processes against the real server, with a browser following the URL they print."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from urllib.parse import urlsplit

import pytest

from bot.auth.redirects import RedirectError, check_client_redirect
from bot.auth.sealing import SealError, seal, unseal
from tests.oidc_support import Browser, HostileProvider, connector_doc, put_connector, query_of, signin_server

KEY = "ab" * 32
OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
SETTINGS = {"allowed_https_hostnames": ["*.example.com", "^cli-[0-9]+\\.corp\\.test$", "^exact.test", "host.test"],
            "insecure_allowed_cidr_ranges": ["10.0.0.0/8", "fd00::/8"]}

CLIENT_REDIRECTS = [
    (f"http://127.0.0.1:53421/callback?secret_key={KEY}", True),
    (f"http://localhost:8000/callback?secret_key={KEY}", True),
    (f"https://localhost/callback?secret_key={KEY}", True),
    (f"http://[::1]:9/callback?secret_key={KEY}", True),
    (f"http://10.1.2.3:8080/callback?secret_key={KEY}", True),
    (f"https://10.1.2.3/callback?secret_key={KEY}", True),
    (f"http://[fd00::1]:80/callback?secret_key={KEY}", True),
    (f"http://11.1.2.3/callback?secret_key={KEY}", False),  # outside the CIDR ranges
    (f"https://a.example.com/callback?secret_key={KEY}", True),
    (f"https://a.example.com:443/callback?secret_key={KEY}", True),
    (f"https://example.com/callback?secret_key={KEY}", False),  # `*.x` does not match bare `x`
    (f"https://a.example.com:8443/callback?secret_key={KEY}", False),  # https hostnames: port 443 only
    (f"http://a.example.com/callback?secret_key={KEY}", False),  # hostnames need https
    (f"https://cli-42.corp.test/callback?secret_key={KEY}", True),  # `^…$` is a regular expression
    (f"https://cli-x.corp.test/callback?secret_key={KEY}", False),
    (f"https://exact.test/callback?secret_key={KEY}", False),  # `^…` without `$` is a literal, not a regex
    (f"https://exact.testing/callback?secret_key={KEY}", False),
    (f"https://host.test/callback?secret_key={KEY}", True),
    (f"https://evil.host.test/callback?secret_key={KEY}", False),
    (f"https://evil.com/callback?secret_key={KEY}", False),
    (f"http://127.0.0.1:53421/other?secret_key={KEY}", False),  # path exactly /callback
    (f"http://127.0.0.1:53421/callback/?secret_key={KEY}", False),
    (f"http://127.0.0.1:53421/callback?secret_key={KEY}&x=1", False),  # exactly one secret_key
    (f"http://127.0.0.1:53421/callback?secret_key={KEY}&secret_key={KEY}", False),
    ("http://127.0.0.1:53421/callback?secret_key=abc", False),  # 64 hex digits
    ("http://127.0.0.1:53421/callback", False),
    (f"http://user@127.0.0.1:53421/callback?secret_key={KEY}", False),  # no userinfo
    (f"http://127.0.0.1:53421/callback?secret_key={KEY}#frag", False),  # no fragment
    (f"http://127.0.0.1:53421/callback?secret_key={KEY}#", False),
    (f"ftp://127.0.0.1/callback?secret_key={KEY}", False),
    (f"javascript://127.0.0.1/callback?secret_key={KEY}", False),
    (f"http://127.0.0.1.evil.com/callback?secret_key={KEY}", False),
    (f"http://localhost.evil.com/callback?secret_key={KEY}", False),
    (f"http://127.0.0.1:99999/callback?secret_key={KEY}", False),  # a port that cannot be
    (f"http://127.0.0.1:53421/callback?secret_key={KEY}\n", False),
    ("", False),
]


@pytest.mark.parametrize(("url", "allowed"), CLIENT_REDIRECTS)
def test_client_redirect_rules(url, allowed):
    if allowed:
        assert check_client_redirect(url, **SETTINGS).secret_key == bytes.fromhex(KEY)
    else:
        with pytest.raises(RedirectError):
            check_client_redirect(url, **SETTINGS)


def test_a_sealed_answer_opens_only_with_its_key():
    key = os.urandom(32)
    sealed = seal(key, {"token": "t"})
    assert unseal(key, sealed) == {"token": "t"} and "t\"" not in sealed
    for other in (os.urandom(32), key[:-1] + bytes([key[-1] ^ 1])):
        with pytest.raises(SealError):
            unseal(other, sealed)
    with pytest.raises(SealError):
        unseal(key, sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1])


async def test_the_console_endpoint_refuses_a_bad_client_before_the_provider(tmp_path):
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url))
        for body in ({"connector_id": "idp", "redirect_url": f"https://evil.com/callback?secret_key={KEY}"},
                     {"connector_id": "idp", "redirect_url": "http://127.0.0.1:1/callback"},
                     {"connector_id": "idp"}):
            async with server.http.post(server.url + "/v1/webapi/oidc/login/console", json=body) as response:
                answer = await response.json()
            assert response.status == 400 and answer["error"]["check"] == "redirect-url", answer
        async with server.http.post(server.url + "/v1/webapi/oidc/login/console",
                                    json={"connector_id": "nope", "redirect_url": "x"}) as response:
            assert response.status == 404
        async with server.http.post(server.url + "/v1/webapi/oidc/login/console", data=b"[1") as response:
            assert response.status == 400
        assert provider.authorize_params == []


async def run_cli(*args: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", *args, env={**os.environ, **env},
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_reviewer_login_and_logout_from_a_terminal(tmp_path):
    provider = HostileProvider()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    async with provider.serving(), signin_server(tmp_path) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url))
        process = await run_cli("login", "--server", server.url, "--no-browser", env=env)
        assert process.stdout is not None
        url = ""
        while not url.startswith("http"):
            url = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().strip()
        assert url.startswith(provider.url + "/authorize")
        browser = Browser()
        try:
            status, final, body = await browser.get(url)
        finally:
            await browser.close()
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err.decode()
        assert "Signed in" in out.decode() and "alice@example.com" in out.decode()
        back = next(h for h in browser.hops if "response=" in h)
        assert urlsplit(back).path == "/callback" and "secret_key" not in back and "token" not in back
        assert set(query_of(back)) == {"response"}
        path = tmp_path / "config" / "reviewer" / "session.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        record = json.loads(path.read_text())
        assert record["token"] not in out.decode() + err.decode()
        bearer = {"Authorization": f"Bearer {record['token']}"}
        async with server.http.put(server.url + OIDC_PATH + "/second", json=connector_doc("second", provider.url,
                                                                                           server.url),
                                   headers=bearer) as response:
            assert response.status == 201  # a bearer session needs no Origin: no browser sends it
        async with server.http.get(server.url + "/v1/webapi/session", headers=bearer) as response:
            assert (await response.json())["roles"] == ["admin"]

        process = await run_cli("logout", env=env)
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0 and not path.exists()
        async with server.http.get(server.url + OIDC_PATH, headers=bearer) as response:
            assert response.status == 401


async def test_login_needs_a_connector_when_the_server_offers_several(tmp_path):
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path) as server:
        for name in ("one", "two"):
            await put_connector(server, connector_doc(name, provider.url, server.url))
        process = await run_cli("login", "--server", server.url, "--no-browser",
                                env={"XDG_CONFIG_HOME": str(tmp_path)})
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 2 and "--connector" in err.decode() and "Traceback" not in err.decode()


async def test_a_refused_terminal_sign_in_tells_the_terminal_why(tmp_path):
    provider = HostileProvider(claims={"iss": "https://evil.example"})
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    async with provider.serving(), signin_server(tmp_path) as server:
        await put_connector(server, connector_doc("idp", provider.url, server.url))
        process = await run_cli("login", "--server", server.url, "--connector", "idp", "--no-browser", env=env)
        assert process.stdout is not None
        url = ""
        while not url.startswith("http"):
            url = (await asyncio.wait_for(process.stdout.readline(), 30)).decode().strip()
        browser = Browser()
        try:
            status, _, body = await browser.get(url)
        finally:
            await browser.close()
        assert status == 403 and "Sign-in refused" in body
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 1 and "(iss)" in err.decode() and "Traceback" not in err.decode()
        assert not (tmp_path / "config" / "reviewer" / "session.json").exists()
