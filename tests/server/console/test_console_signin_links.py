"""One-time sign-in links (bot/server/console/links.py), hostile: a link signs one browser in and
lands it on the console, once; it expires; only the break-glass token itself makes one (no
session, whatever its roles, no cookie); a rotated token voids it; two requests racing for it let
one in; a HEAD does not spend it; it is no session token; bad requests name the field — on SQLite
and on PostgreSQL (the `database_url` fixture)."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from bot.server.app import STORAGE
from bot.server.signin.cookies import SESSION_COOKIE
from bot.server.signin.routes import SIGNIN_STORE
from bot.store.model import AuditQuery
from tests.support.console_support import console_server, session_for
from tests.support.oidc_support import ADMIN_TOKEN
from tests.support.server_support import wait_for

API = "/v1/signin-links"


async def _mint(server, body: dict | None = None, token: str = ADMIN_TOKEN) -> tuple[int, dict]:
    async with server.http.post(server.url + API, json=body, headers={"Authorization": f"Bearer {token}"}) as answer:
        return answer.status, await answer.json()


def _browser() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def _follow(url: str) -> tuple[int, str, str | None, str]:
    """A fresh browser opens `url`: (status, where it was sent, its session cookie, the page it then shows)."""
    async with _browser() as browser:
        async with browser.get(url, allow_redirects=False) as answer:
            status, location = answer.status, answer.headers.get("Location", "")
            assert answer.headers.get("Referrer-Policy") == "no-referrer"
        cookie = next((c.value for c in browser.cookie_jar if c.key == SESSION_COOKIE), None)
        page = ""
        if status == 303:
            async with browser.get(url.split("/console/")[0] + location, allow_redirects=False) as landed:
                assert landed.status == 200
                page = await landed.text()
        return status, location, cookie, page


async def test_a_link_signs_one_browser_in_and_lands_on_the_console(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        status, made = await _mint(server, {"next": "/console/repos"})
        assert status == 201 and made["url"].startswith(f"{server.url}/console/login/link?token=")
        assert made["expiresAt"].endswith("Z")
        status, location, cookie, page = await _follow(made["url"])
        assert (status, location) == (303, "/console/repos") and cookie and "Repositories" in page
        status, _, cookie, _ = await _follow(made["url"])  # the same link again, in another browser
        assert status == 403 and cookie is None
        store = server.app[SIGNIN_STORE]  # a link that matched nothing pending is listed apart: anyone can send one
        log = [*await store.signins(), *await store.signins(unauthenticated=True)]
        uses = [(e["flow"], e["ok"]) for e in log if e["flow"] == "console-link"]
        assert sorted(uses) == [("console-link", False), ("console-link", True)]
        [made_entry] = await server.app[STORAGE].audit.entries(AuditQuery(action="signin-link.create"))
        assert made_entry.actor == "break-glass token" and made_entry.details["next"] == "/console/repos"
        [used] = await server.app[STORAGE].audit.entries(AuditQuery(action="signin.break-glass"))
        assert used.actor == "break-glass token" and used.details == {"flow": "console-link"}


async def test_only_the_break_glass_token_itself_makes_a_link(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        async with server.http.post(server.url + API) as answer:
            assert answer.status == 401 and (await answer.json())["kind"] == "Status"
        assert (await _mint(server, token="not-the-token"))[0] == 401
        admin = await session_for(server, ["admin"])  # every permission, by the admin file's access
        try:
            token = next(c.value for c in admin.cookie_jar if c.key == SESSION_COOKIE)
            status, refused = await _mint(server, token=token)  # the session token as a bearer
            assert status == 403 and "only the break-glass REVIEWER_ADMIN_TOKEN itself" in refused["message"]
            async with admin.post(server.url + API, json={}) as answer:  # the cookie, from the console's origin
                assert answer.status == 403
        finally:
            await admin.close()
        async with _browser() as browser:  # a console session the token itself opened: still a session
            async with browser.post(f"{server.url}/console/login/token", data={"token": ADMIN_TOKEN},
                                    headers={"Origin": server.url}, allow_redirects=False) as answer:
                assert answer.status == 303
            async with browser.post(server.url + API, json={}, headers={"Origin": server.url}) as answer:
                assert answer.status == 403


async def test_a_link_expires(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        status, made = await _mint(server, {"expiresIn": 1})
        got = time.time()
        assert status == 201

        async def past() -> bool:  # bounded by the link's one second, which the test chose
            return time.time() > got + 1.05
        await wait_for(past, 5)
        status, _, cookie, _ = await _follow(made["url"])
        assert status == 403 and cookie is None


async def test_rotating_the_token_voids_a_link_not_yet_used(tmp_path):
    async with console_server(tmp_path) as server:
        status, made = await _mint(server)
        assert status == 201
    async with console_server(tmp_path, REVIEWER_ADMIN_TOKEN="a-rotated-admin-token-4e1b-0123456789") as server:
        link = server.url + "/console/" + made["url"].split("/console/", 1)[1]
        status, _, cookie, _ = await _follow(link)
        assert status == 403 and cookie is None


async def test_two_requests_racing_for_one_link_let_one_in(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        for _ in range(3):
            _, made = await _mint(server)
            results = await asyncio.gather(*(_follow(made["url"]) for _ in range(4)))
            assert sorted(r[0] for r in results) == [303, 403, 403, 403]


async def test_a_head_request_does_not_spend_a_link_and_a_link_is_no_session(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        _, made = await _mint(server)
        async with server.http.head(made["url"], allow_redirects=False) as answer:
            assert answer.status == 405
        token = made["url"].split("token=", 1)[1]
        jar = aiohttp.CookieJar(unsafe=True)
        jar.update_cookies({SESSION_COOKIE: token}, aiohttp.client.URL(server.url))
        async with aiohttp.ClientSession(cookie_jar=jar) as forged:  # the link's token as a session cookie
            async with forged.get(server.url + "/console/", allow_redirects=False) as answer:
                assert answer.status == 303 and answer.headers["Location"].startswith("/console/login")
        async with server.http.get(server.url + "/v1/learnings", headers={"Authorization": f"Bearer {token}"}) as answer:
            assert answer.status == 401
        assert (await _follow(made["url"]))[0] == 303  # still unused until then
        for bad in ("", "x" * 300, token[:-1]):
            assert (await _follow(f"{server.url}/console/login/link?token={bad}"))[0] == 403


async def test_a_bad_request_names_the_field(tmp_path):
    async with console_server(tmp_path) as server:
        for body, field in (({"expiresIn": 0}, "/expiresIn"), ({"expiresIn": 901}, "/expiresIn"),
                            ({"expiresIn": "60"}, "/expiresIn"), ({"expiresIn": True}, "/expiresIn"),
                            ({"next": "https://evil.example/console/"}, "/next"), ({"next": "/v1/audit"}, "/next"),
                            ({"user": "root"}, "/user")):
            status, refused = await _mint(server, body)
            assert status == 422, body
            assert [c["field"] for c in refused["details"]["causes"]] == [field], refused
        async with server.http.post(server.url + API, data=b"[1,", headers={
                "Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}) as answer:
            assert answer.status == 400
        async with server.http.post(server.url + API, data=b"{}" + b" " * 5000, headers={
                "Authorization": f"Bearer {ADMIN_TOKEN}"}) as answer:
            assert answer.status == 413
