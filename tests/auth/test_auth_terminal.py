"""Terminal sign-in: the client-redirect rules (a table, after Teleport's cases), the console
endpoint refusing before any provider is contacted, and `reviewer login` / `reviewer logout` run
as processes against the real server, with a browser following the URL they print."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from urllib.parse import urlsplit

import pytest

from bot.auth.redirects import (
    DEFAULT_RETURN,
    RedirectError,
    check_client_redirect,
    choose_redirect_url,
    origin_of,
    web_return_path,
)
from bot.auth.sealing import SealError, seal, unseal
from tests.support.oidc_support import Browser, HostileProvider, connector_doc, put_connector, query_of, signin_server
from tests.support.warm_command import warm_bot

KEY = "ab" * 32
OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
SETTINGS = {"allowed_https_hostnames": ["*.example.com", "^cli-[0-9]+\\.corp\\.test$", "^exact.test", "host.test",
                                       "^cli\\.example\\.org|cli2\\.example\\.org$"],
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

# What a browser would read differently from a lenient parser (Python's urlsplit reads the host of
# `https://evil.com\\.example.com/` as `evil.com\\.example.com`; a browser goes to evil.com): each
# is refused, or accepted only where every reader sees the same host.
CLIENT_REDIRECT_FAMILY = [
    (f"https://evil.com\\.example.com/callback?secret_key={KEY}", False),  # the reported takeover
    (f"https://evil.com\\@a.example.com/callback?secret_key={KEY}", False),
    (f"https://a.example.com\\callback?secret_key={KEY}", False),
    (f"https://evil.com%5C.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com%5c.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com%2F.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com%2f.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com%40a.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com%00.example.com/callback?secret_key={KEY}", False),
    (f"https://a%2Eexample.com/callback?secret_key={KEY}", False),  # no escapes in a host at all
    (f"https://a.ex%C3%A4mple.com/callback?secret_key={KEY}", False),
    (f"https://evil.com\t.example.com/callback?secret_key={KEY}", False),  # a browser drops tabs and newlines
    (f"https://evil.com\n.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com\r.example.com/callback?secret_key={KEY}", False),
    (f"https://a.example.com/call\tback?secret_key={KEY}", False),
    (f"https://a.example.com@evil.com/callback?secret_key={KEY}", False),  # userinfo
    (f"https://evil.com@a.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com:@a.example.com/callback?secret_key={KEY}", False),
    (f"https://@a.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com/a.example.com/callback?secret_key={KEY}", False),  # userinfo-looking paths
    (f"https://evil.com/callback@a.example.com?secret_key={KEY}", False),
    (f"https://a.example.com/callback@evil.com?secret_key={KEY}", False),
    (f"https://evil.com?@a.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com#@a.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com;@a.example.com/callback?secret_key={KEY}", False),
    (f"https://evil.com\u3002example.com/callback?secret_key={KEY}", False),  # full-width dots
    (f"https://a.example.com\u3002evil.net/callback?secret_key={KEY}", False),
    (f"https://a\uff0eexample\uff0ecom/callback?secret_key={KEY}", False),
    (f"https://\uff41.example.com/callback?secret_key={KEY}", False),  # a full-width letter
    (f"https://b\u00fccher.example.com/callback?secret_key={KEY}", False),  # Unicode: write it as xn--
    (f"https://\u0430.example.com/callback?secret_key={KEY}", False),  # Cyrillic a
    (f"https://xn--bcher-kva.example.com/callback?secret_key={KEY}", True),  # the same host to every reader
    (f"https://a.example.com./callback?secret_key={KEY}", False),  # trailing dot
    (f"https://a..example.com/callback?secret_key={KEY}", False),
    (f"http://localhost./callback?secret_key={KEY}", False),
    (f"https://A.EXAMPLE.COM/callback?secret_key={KEY}", True),  # hosts compare case-insensitively
    (f"https://CLI-42.Corp.Test/callback?secret_key={KEY}", True),
    (f"HTTPS://a.example.com/callback?secret_key={KEY}", True),
    (f"http://LocalHost:8000/callback?secret_key={KEY}", True),
    (f"https://a.example.com:443/callback?secret_key={KEY}", True),  # :443 or none
    (f"https://a.example.com:/callback?secret_key={KEY}", True),
    (f"https://a.example.com:444/callback?secret_key={KEY}", False),
    (f"https://a.example.com:80/callback?secret_key={KEY}", False),
    (f"https://a.example.com:443:443/callback?secret_key={KEY}", False),
    (f"https://a.example.com:+443/callback?secret_key={KEY}", False),
    (f"http://[0:0:0:0:0:0:0:1]:9/callback?secret_key={KEY}", True),  # IPv6 literals: ::1 however written
    (f"http://[::1%25lo]:9/callback?secret_key={KEY}", False),  # zones: browsers do not take them
    (f"http://[fd00::1%25eth0]/callback?secret_key={KEY}", False),
    (f"http://[fd00::1%eth0]/callback?secret_key={KEY}", False),
    (f"http://[::ffff:127.0.0.1]:9/callback?secret_key={KEY}", False),  # IPv4-mapped: not written as loopback
    (f"http://[::ffff:10.1.2.3]/callback?secret_key={KEY}", False),
    (f"http://::1:9/callback?secret_key={KEY}", False),  # an IPv6 literal goes in brackets
    (f"http://[::1/callback?secret_key={KEY}", False),
    (f"http://[evil.com]/callback?secret_key={KEY}", False),
    (f"http://127.1:9/callback?secret_key={KEY}", False),  # IPv4 forms a browser reads as 127.0.0.1
    (f"http://0x7f.0.0.1:9/callback?secret_key={KEY}", False),
    (f"http://2130706433:9/callback?secret_key={KEY}", False),
    (f"http://010.1.2.3/callback?secret_key={KEY}", False),  # a browser reads 8.1.2.3
    (f"http://10.1.2.3./callback?secret_key={KEY}", False),
    (f"https://cli.example.org/callback?secret_key={KEY}", True),  # a regular expression: the whole host
    (f"https://cli2.example.org/callback?secret_key={KEY}", True),
    (f"https://cli.example.org.evil.net/callback?secret_key={KEY}", False),
    (f"https://evil.cli2.example.org/callback?secret_key={KEY}", False),
    (f"https://a.example.com/%63allback?secret_key={KEY}", False),  # the path as written: /callback
    (f"https://a.example.com//callback?secret_key={KEY}", False),
    (f"https://a.example.com/x/../callback?secret_key={KEY}", False),
    (f"https://a.example.com/callback?secret%5Fkey={KEY}", False),  # the query as written
    (f"https://a.example.com/callback?secret_key={KEY}&", False),
    (f"https://a.example.com/callback?secret_key={KEY};x=1", False),
    (f"https://a.example.com/callback?secret_key=%{KEY[:62]}", False),
    (f"//a.example.com/callback?secret_key={KEY}", False),  # no scheme
    (f"https:a.example.com/callback?secret_key={KEY}", False),
    (f"https:/a.example.com/callback?secret_key={KEY}", False),
    (f"https:///a.example.com/callback?secret_key={KEY}", False),
]


@pytest.mark.parametrize(("url", "allowed"), CLIENT_REDIRECTS + CLIENT_REDIRECT_FAMILY)
def test_client_redirect_rules(url, allowed):
    if allowed:
        assert check_client_redirect(url, **SETTINGS).secret_key == bytes.fromhex(KEY)
    else:
        with pytest.raises(RedirectError):
            check_client_redirect(url, **SETTINGS)


# The web endpoints' `redirect_url`: a path on this server, however it is encoded.
WEB_RETURNS = [
    ("/console/", True),
    ("/console/repos/acme/app", True),
    ("/console/deliveries?repo=acme%2Fapp&state=failed", True),  # the query is the page's own business
    ("/console/repos/acme/%C3%A9t%C3%A9", True),
    ("/", True),
    ("//evil.example/", False),
    ("/\\evil.example", False),
    ("/\\/evil.example", False),
    ("/console\\..\\\\evil.example", False),
    ("/%2F%2Fevil.example", False),  # encoded forms of the same
    ("/%2f/evil.example", False),
    ("/%5Cevil.example", False),
    ("/%5cevil.example", False),
    ("/%252F%252Fevil.example", False),  # twice encoded
    ("/%09/evil.example", False),
    ("/%0a/evil.example", False),
    ("/%20/evil.example", False),
    ("/.//evil.example", False),  # dot segments a browser would remove
    ("/./%2e/evil.example", False),
    ("/console/../..//evil.example", False),
    ("/console/%2e%2e/%2E%2E//evil.example", False),
    ("/console/.%2e/x", False),
    ("/\t/evil.example", False),  # a browser drops tabs and newlines
    ("/\n/evil.example", False),
    ("/\r\n/evil.example", False),
    ("/\u3002/evil.example", False),
    ("/a b", False),
    ("/console/\u00a0", False),
    ("/console/%zz", False),  # not a valid escape
    ("https://evil.example/", False),
    ("https:evil.example", False),
    ("//user@evil.example/", False),
    ("javascript:alert(1)", False),
    ("evil.example", False),
    ("?next=/", False),
    ("#/", False),
    ("/" + "a" * 2048, False),
]


@pytest.mark.parametrize(("path", "allowed"), WEB_RETURNS)
def test_web_return_paths(path, allowed):
    if allowed:
        assert web_return_path(path) == path
    else:
        with pytest.raises(RedirectError):
            web_return_path(path)
    assert web_return_path(None) == web_return_path("") == DEFAULT_RETURN


@pytest.mark.parametrize(("url", "sent"), [
    (f"https://A.Example.COM:443/callback?secret_key={KEY}", f"https://a.example.com:443/callback?secret_key={KEY}"),
    (f"http://[0:0::1]:9/callback?secret_key={KEY}", f"http://[::1]:9/callback?secret_key={KEY}"),
    (f"HTTP://LOCALHOST:9/callback?secret_key={KEY}", f"http://localhost:9/callback?secret_key={KEY}"),
])
def test_the_answer_goes_to_the_url_as_checked(url, sent):
    """The listener the sealed answer is sent to is rebuilt from the parts that were checked."""
    assert check_client_redirect(url, **SETTINGS).url == sent


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
    """`reviewer ARGS…` as a process of its own (forked from an interpreter that has imported the command:
    tests/support/warm_command.py)."""
    return await asyncio.create_subprocess_exec(*warm_bot(args[0]), *args, env={**os.environ, **env},
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


@pytest.mark.parametrize(("url", "origin"), [
    ("https://Reviewer.Example.com:443/x", "https://reviewer.example.com"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
    ("http://[::1]:80/", "http://[::1]"),
    ("https://user:pw@reviewer.example.com/", "https://reviewer.example.com"),
    ("https://evil.example\\@reviewer.example.com/", ""),  # read one way by a browser, another by urlsplit
    ("https://reviewer.example.com%5C@evil.example/", "https://evil.example"),  # as a browser reads it
    ("https://reviewer.example.com:99999999/", ""),
    ("null", ""),
    ("", ""),
])
def test_origins_are_read_by_the_strict_parser(url, origin):
    assert origin_of(url) == origin


def test_the_provider_gets_the_callback_that_matches_the_public_url():
    urls = ["https://a.example.com/v1/webapi/oidc/callback", "https://b.example.com:8443/v1/webapi/oidc/callback",
            "https://b.example.com/v1/webapi/oidc/callback"]
    assert choose_redirect_url(urls, "https://B.example.com") == urls[2]
    assert choose_redirect_url(urls, "https://b.example.com:8443") == urls[1]
    assert choose_redirect_url(urls, "https://b.example.com:9443") == urls[1]  # the host alone, else the first
    assert choose_redirect_url(urls, "https://evil.example\\@b.example.com") == urls[0]
    assert choose_redirect_url(urls, None) == urls[0]
