"""Hostile tests of the console: what an attacker controls — names, errors, usernames, `next`,
another session's CSRF token, an expired session, a cross-site form — changes nothing it should not,
on SQLite and on PostgreSQL (the `database_url` fixture)."""

from __future__ import annotations

import time

import aiohttp

from bot.auth.guard import BREAK_GLASS
from bot.auth.sessions import Session, create_session
from bot.server.signin.cookies import SESSION_COOKIE
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.console_support import console_server, csrf_of, failed_delivery, session_for
from tests.support.oidc_support import ADMIN_TOKEN, connector_doc
from tests.support.server_support import Recorder

SCRIPT = "<script>alert(1)</script>"


async def test_no_connector_can_be_named_as_the_break_glass_session(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        doc = connector_doc(BREAK_GLASS, "https://idp.example.com", server.url)
        url = f"{server.url}/apis/resources.service.dev/v3/oidcconnectors/{BREAK_GLASS}"
        async with server.http.put(url, json=doc, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
            assert 400 <= response.status < 500


async def test_what_others_wrote_is_escaped_on_every_page(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, database_url=database_url) as server:
        await failed_delivery(server, recorder, "d-xss-1", why=SCRIPT)
        await server.app[SIGNIN_STORE].record_signin({
            "at": time.time(), "connector": SCRIPT, "kind": "oidc", "flow": "web", "username": SCRIPT, "ok": False,
            "roles": [], "check": "no-roles", "message": SCRIPT, "claims": [SCRIPT], "warnings": [SCRIPT]})
        admin = await session_for(server, ["admin"], username=SCRIPT)
        try:
            for path in ("/console/", "/console/deliveries/d-xss-1", "/console/signins",
                         "/console/deliveries?repo=%3Cscript%3Ealert(1)%3C%2Fscript%3E"):
                async with admin.get(server.url + path) as response:
                    page = await response.text()
                assert response.status == 200, path
                assert SCRIPT not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page, path
        finally:
            await admin.close()


async def test_next_never_leaves_the_console(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        for hostile in ("https://evil.example/console/", "//evil.example/console/", "/\\evil.example/",
                        "/v1/webapi/logout", "/console/\nSet-Cookie: x=1", "javascript:alert(1)"):
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
                async with browser.post(f"{server.url}/console/login/token", allow_redirects=False,
                                        data={"token": ADMIN_TOKEN, "next": hostile},
                                        headers={"Origin": server.url}) as response:
                    assert response.status == 303
                    assert response.headers["Location"] == "/console/", hostile
            async with server.http.get(server.url + "/console/login", params={"next": hostile}) as response:
                page = await response.text()
            assert 'name="next" value="/console/"' in page, hostile


async def test_a_form_needs_this_sessions_token_and_this_servers_origin(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, database_url=database_url) as server:
        await failed_delivery(server, recorder, "d-csrf-1")
        mine = await session_for(server, ["admin"])
        other = await session_for(server, ["admin"], username="eve@example.com")
        try:
            async with other.get(server.url + "/console/deliveries/d-csrf-1") as response:
                others_token = csrf_of(await response.text())
            url = server.url + "/console/deliveries/d-csrf-1/redeliver"
            async with mine.post(url, data={"csrf": others_token}, allow_redirects=False) as response:
                assert response.status == 403  # a token is bound to its session
            async with mine.get(server.url + "/console/deliveries/d-csrf-1") as response:
                my_token = csrf_of(await response.text())
            async with mine.post(url, data={"csrf": my_token}, allow_redirects=False,
                                 headers={"Origin": "null"}) as response:
                assert response.status == 403  # a sandboxed or cross-site form
            assert await server.state("d-csrf-1") == "failed"
            async with aiohttp.ClientSession() as bare:  # no Origin, no Referer: refused too
                async with bare.post(f"{server.url}/console/login/token", data={"token": ADMIN_TOKEN},
                                     allow_redirects=False) as response:
                    assert response.status == 403
        finally:
            await mine.close()
            await other.close()


async def test_an_expired_session_is_signed_out_and_signing_out_ends_the_session(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        now = time.time()
        token = await create_session(server.app[SIGNIN_STORE], Session("old@example.com", "mock", ["admin"],
                                                                        now - 7200, now - 1))
        jar = aiohttp.CookieJar(unsafe=True)
        jar.update_cookies({SESSION_COOKIE: token}, aiohttp.client.URL(server.url))
        async with aiohttp.ClientSession(cookie_jar=jar) as expired:
            async with expired.get(server.url + "/console/", allow_redirects=False) as response:
                assert response.status == 303 and response.headers["Location"].startswith("/console/login")
        admin = await session_for(server, ["admin"])
        try:
            async with admin.get(server.url + "/console/") as response:
                csrf = csrf_of(await response.text())
            kept = next(c.value for c in admin.cookie_jar if c.key == SESSION_COOKIE)
            async with admin.post(server.url + "/console/logout", data={"csrf": csrf},
                                  allow_redirects=False) as response:
                assert response.status == 303 and response.headers["Location"] == "/console/login"
            jar = aiohttp.CookieJar(unsafe=True)
            jar.update_cookies({SESSION_COOKIE: kept}, aiohttp.client.URL(server.url))
            async with aiohttp.ClientSession(cookie_jar=jar) as replay:  # the old cookie, sent again
                async with replay.get(server.url + "/console/", allow_redirects=False) as response:
                    assert response.status == 303  # the session is gone from the store, not only the cookie
        finally:
            await admin.close()
