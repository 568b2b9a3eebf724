"""The console's sessions page, hostile: a viewer sees and ends only their own sessions; an
administrator (connectors:write) sees and ends any; a form without the CSRF token, with another
session's token, or from another site is refused and ends nothing. On SQLite and on PostgreSQL
(the `database_url` fixture)."""

from __future__ import annotations

import re

from bot.auth.sessions import token_key
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.console_support import ACCESS_YAML, console_server, csrf_of, session_for
from tests.support.oidc_support import ADMIN_TOKEN


def _keys(page: str) -> list[str]:
    return re.findall(r'name="session" value="([0-9a-f]{64})"', page)


def _token(browser) -> str:
    return next(c.value for c in browser.cookie_jar if c.key == "reviewer_session")


async def test_a_viewer_sees_and_ends_only_their_own_sessions(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        dana = await session_for(server, ["auditor"], username="dana@example.com")
        dana_laptop = await session_for(server, ["auditor"], username="dana@example.com")
        erin = await session_for(server, ["auditor"], username="erin@example.com")
        try:
            async with dana.get(server.url + "/console/sessions") as response:
                assert response.status == 200
                page = await response.text()
            keys = _keys(page)
            assert sorted(keys) == sorted([token_key(_token(dana)), token_key(_token(dana_laptop))])
            assert "erin@example.com" not in page and "(this browser)" in page

            # erin's session: dana may not end it, however the form is made
            async with dana.post(server.url + "/console/sessions/end",
                                 data={"csrf": csrf_of(page), "session": token_key(_token(erin))}) as response:
                assert response.status == 403
                assert "only an administrator (connectors:write)" in await response.text()
            async with erin.get(server.url + "/console/sessions") as response:
                assert response.status == 200  # still signed in

            # dana ends her other session: it is signed out, hers here goes on
            async with dana.post(server.url + "/console/sessions/end", allow_redirects=False,
                                 data={"csrf": csrf_of(page), "session": token_key(_token(dana_laptop))}) as response:
                assert response.status == 303 and response.headers["Location"] == "/console/sessions?ended=1"
            async with dana_laptop.get(server.url + "/console/sessions", allow_redirects=False) as response:
                assert response.status == 303 and response.headers["Location"].startswith("/console/login")
            async with dana.get(server.url + "/console/sessions") as response:
                assert response.status == 200 and _keys(await response.text()) == [token_key(_token(dana))]
        finally:
            for browser in (dana, dana_laptop, erin):
                await browser.close()


async def test_an_administrator_ends_anyones_session(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        admin = await session_for(server, ["writer"], username="ada@example.com")
        erin = await session_for(server, ["auditor"], username="erin@example.com")
        try:
            async with admin.get(server.url + "/console/sessions") as response:
                page = await response.text()
            erin_key = token_key(_token(erin))
            assert erin_key in _keys(page) and "erin@example.com" in page
            assert _token(erin) not in page  # the key names a session; the token is never shown
            async with admin.post(server.url + "/console/sessions/end", allow_redirects=False,
                                  data={"csrf": csrf_of(page), "session": erin_key}) as response:
                assert response.status == 303
            assert await server.app[SIGNIN_STORE].get_session(erin_key) is None
            async with erin.get(server.url + "/console/", allow_redirects=False) as response:
                assert response.status == 303  # signed out
        finally:
            await admin.close()
            await erin.close()


async def test_a_forged_form_ends_nothing(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        admin = await session_for(server, ["writer"], username="ada@example.com")
        other = await session_for(server, ["writer"], username="bo@example.com")
        erin = await session_for(server, ["auditor"], username="erin@example.com")
        erin_key = token_key(_token(erin))
        try:
            async with other.get(server.url + "/console/sessions") as response:
                others_csrf = csrf_of(await response.text())
            for data in ({"session": erin_key}, {"session": erin_key, "csrf": ""},
                         {"session": erin_key, "csrf": others_csrf}):  # none, empty, another session's token
                async with admin.post(server.url + "/console/sessions/end", data=data) as response:
                    assert response.status == 403, data
                    assert "CSRF token is missing or wrong" in await response.text()
            async with admin.get(server.url + "/console/sessions") as response:
                csrf = csrf_of(await response.text())
            async with admin.post(server.url + "/console/sessions/end", data={"session": erin_key, "csrf": csrf},
                                  headers={"Origin": "https://evil.example"}) as response:
                assert response.status == 403  # another site's form, even with the right token
            for bad in ("x" * 64, erin_key.upper(), "", "../" + erin_key):
                async with admin.post(server.url + "/console/sessions/end", data={"session": bad, "csrf": csrf}) \
                        as response:
                    assert response.status == 400, bad
            assert await server.app[SIGNIN_STORE].get_session(erin_key) is not None
        finally:
            for browser in (admin, other, erin):
                await browser.close()


async def test_ending_anothers_session_needs_the_mfa_round_connectors_write_needs(tmp_path):
    """Ending another user's session is an administrator's act, allowed by connectors:write: where
    the admin file asks a fresh MFA check for connectors:write, it asks one for this too. Ending
    one's own session needs none."""
    admin_yaml = ACCESS_YAML.replace('required: ["config:write"]', 'required: ["connectors:write"]')
    async with console_server(tmp_path, admin_yaml=admin_yaml) as server:
        admin = await session_for(server, ["writer"], username="ada@example.com")
        admin_laptop = await session_for(server, ["writer"], username="ada@example.com")
        erin = await session_for(server, ["auditor"], username="erin@example.com")
        erin_key = token_key(_token(erin))
        try:
            async with admin.get(server.url + "/console/sessions") as response:
                csrf = csrf_of(await response.text())
            async with admin.post(server.url + "/console/sessions/end", allow_redirects=False,
                                  data={"csrf": csrf, "session": erin_key}) as response:
                assert response.status == 403
                assert "MFA" in await response.text()
            assert await server.app[SIGNIN_STORE].get_session(erin_key) is not None
            async with admin.post(server.url + "/console/sessions/end", allow_redirects=False,
                                  data={"csrf": csrf, "session": token_key(_token(admin_laptop))}) as response:
                assert response.status == 303  # her own: no MFA round needed
        finally:
            for browser in (admin, admin_laptop, erin):
                await browser.close()


async def test_ending_anothers_session_is_in_the_audit_log_and_ending_ones_own_is_not(tmp_path):
    async with console_server(tmp_path) as server:
        admin = await session_for(server, ["writer"], username="ada@example.com")
        erin = await session_for(server, ["auditor"], username="erin@example.com")
        try:
            for browser, who in ((admin, erin), (admin, admin)):
                async with admin.get(server.url + "/console/sessions") as response:
                    page = await response.text()
                async with browser.post(server.url + "/console/sessions/end", allow_redirects=False,
                                        data={"csrf": csrf_of(page), "session": token_key(_token(who))}) as response:
                    assert response.status == 303
            async with server.http.get(server.url + "/v1/audit?action=session.end",
                                       headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
                entries = (await response.json())["entries"]
        finally:
            await admin.close()
            await erin.close()
    [entry] = entries
    assert (entry["actor"], entry["action"]) == ("ada@example.com", "session.end")
    assert entry["details"] == {"username": "erin@example.com", "connector": "mock"}
    assert entry["target"] == f"sessions/{token_key(_token(erin))[:16]}"
