"""The console over plain HTTP: sign-in (break-glass token, redirect back), every route's
permission, accounts narrowing, CSRF and Origin on forms, redelivery, the timeline, connector
apply with errors at their line, security headers. Browser tests are in test_console_browser.py.

Each test runs on SQLite and on PostgreSQL (the `database_url` fixture)."""

from __future__ import annotations

import re

import aiohttp
from aiohttp import web

from bot.auth.guard import BREAK_GLASS
from bot.events.jobs import ReviewResult
from bot.server.app import STORAGE
from bot.server.console.render import when
from bot.server.jobs.timeline import read_attempts
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.console_support import (
    ACCESS_YAML,
    console_server,
    csrf_of,
    failed_delivery,
    server_with,
    serving,
    session_for,
)
from tests.support.oidc_support import ADMIN_TOKEN, CLIENT_SECRET
from tests.support.server_support import Recorder, pr_payload, wait_for

PAGES = ["/console/", "/console/deliveries", "/console/deliveries/nope", "/console/repos/acme/app",
         "/console/connectors", "/console/connectors/oidcconnectors/x", "/console/signins", "/console/audit"]
# (path, the permission it needs)
NEEDS = [("/console/", "deliveries:read"), ("/console/deliveries", "deliveries:read"),
         ("/console/repos/other/app", "config:read"), ("/console/connectors", "connectors:read"),
         ("/console/signins", "connectors:read"), ("/console/audit", "audit:read")]


async def token_login(server, browser: aiohttp.ClientSession, token: str = ADMIN_TOKEN,
                      next_path: str = "/console/deliveries") -> aiohttp.ClientResponse:
    return await browser.post(f"{server.url}/console/login/token", data={"token": token, "next": next_path},
                              headers={"Origin": server.url}, allow_redirects=False)


async def test_signed_out_every_page_goes_to_login_and_back(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        for path in PAGES:
            async with server.http.get(server.url + path, allow_redirects=False) as response:
                assert response.status == 303, path
                assert response.headers["Location"].startswith("/console/login?next="), path
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            async with await token_login(server, browser, next_path="/console/signins?outcome=failed") as response:
                assert response.status == 303 and response.headers["Location"] == "/console/signins?outcome=failed"
            async with browser.get(server.url + "/console/signins?outcome=failed") as response:
                assert response.status == 200 and "<h1>Sign-ins</h1>" in await response.text()
            # the break-glass session is the token's: every permission, also on the JSON APIs
            async with browser.get(server.url + "/v1/webapi/session") as response:
                body = await response.json()
                assert body["connector"] == BREAK_GLASS and "connectors:write" in body["permissions"]


async def test_the_token_login_refuses_a_wrong_token_another_site_and_a_foreign_next(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server, \
            aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
        async with await token_login(server, browser, token="wrong") as response:
            assert response.status == 303 and "error=token" in response.headers["Location"]
        assert not [c for c in browser.cookie_jar if c.key == "reviewer_session"]
        async with browser.post(f"{server.url}/console/login/token", data={"token": ADMIN_TOKEN},
                                headers={"Origin": "https://evil.example"}, allow_redirects=False) as response:
            assert response.status == 403
        async with await token_login(server, browser, next_path="//evil.example/console/") as response:
            assert response.headers["Location"] == "/console/"
        async with browser.get(server.url + "/console/login?next=/console/&error=token") as response:
            page = await response.text()
            assert "is not the server" in page and ADMIN_TOKEN not in page


async def test_every_route_answers_403_without_its_permission(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        nobody = await session_for(server, ["undefined-role"])
        auditor = await session_for(server, ["auditor", "watcher"])
        try:
            for path, permission in NEEDS:
                async with nobody.get(server.url + path, allow_redirects=False) as response:
                    assert response.status == 403, path
                    assert permission in await response.text(), path
            async with auditor.get(server.url + "/console/repos/other/app") as response:
                assert response.status == 403 and "config:read on account other" in await response.text()
            async with auditor.get(server.url + "/console/connectors") as response:
                page = await response.text()
                assert response.status == 200 and "Apply a connector" not in page  # no control it may not use
            async with auditor.post(server.url + "/console/connectors/apply", data={"yaml": "x"}) as response:
                assert response.status == 403 and "connectors:write" in await response.text()
            async with auditor.get(server.url + "/v1/webapi/oidc/test/web?connector_id=x", allow_redirects=False) \
                    as response:
                assert response.status == 403 and "connectors:write" in await response.text()
            async with auditor.get(server.url + "/console/connectors/oidcconnectors/x?test=abc") as response:
                assert response.status == 404
            async with auditor.post(server.url + "/console/repos/acme/app/simulate", data={"number": "1"}) as response:
                assert response.status == 403 and "config:write" in await response.text()
            async with auditor.get(server.url + "/console/repos/acme/app") as response:
                assert response.status == 200 and "Simulate" not in await response.text()
        finally:
            await nobody.close()
            await auditor.close()


async def test_a_failed_delivery_shows_why_and_is_redelivered_with_csrf_and_permission(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, database_url=database_url) as server:
        await failed_delivery(server, recorder, "d-failed-1", repo="acme/app")
        await failed_delivery(server, recorder, "d-other-1", repo="other/app", why="boom")
        writer = await session_for(server, ["writer"])
        auditor = await session_for(server, ["auditor"])
        try:
            async with writer.get(server.url + "/console/deliveries?state=failed") as response:
                listing = await response.text()
                assert "d-failed-1" in listing and "d-other-1" in listing
            async with auditor.get(server.url + "/console/deliveries") as response:
                listing = await response.text()
                assert "d-failed-1" in listing and "d-other-1" not in listing  # accounts: acme* only
            async with auditor.get(server.url + "/console/deliveries/d-other-1") as response:
                assert response.status == 404
            async with writer.get(server.url + "/console/deliveries/d-failed-1") as response:
                page = await response.text()
            assert "the model answered 500" in page and "Redeliver" in page
            assert "https://github.com/acme/app/pull/7" in page and "attempt 1: failed" in page
            async with auditor.get(server.url + "/console/deliveries/d-failed-1") as response:
                assert "Redeliver" not in await response.text()  # deliveries:write is not the auditor's
            url = server.url + "/console/deliveries/d-failed-1/redeliver"
            async with writer.post(url, data={"csrf": "0" * 64}, allow_redirects=False) as response:
                assert response.status == 403 and "CSRF" in await response.text()
            async with writer.post(url, data={"csrf": csrf_of(page)}, allow_redirects=False,
                                   headers={"Origin": "https://evil.example"}) as response:
                assert response.status == 403
            assert await server.state("d-failed-1") == "failed"
            recorder.fail.pop("d-failed-1")
            async with writer.post(url, data={"csrf": csrf_of(page)}, allow_redirects=False) as response:
                assert response.status == 303
            record = await server.wait_state("d-failed-1", "done")
            assert record["attempts"] == 2
            async with writer.get(server.url + "/console/deliveries/d-failed-1") as response:
                page = await response.text()
            assert "attempt 2: done" in page and "Redeliver" not in page
            async with writer.post(url, data={"csrf": csrf_of(page)}, allow_redirects=False) as response:
                assert response.status == 409  # done: not run twice
        finally:
            await writer.close()
            await auditor.close()


async def _reviewed(server, recorder: Recorder, delivery: str, result: ReviewResult, repo: str = "acme/app",
                    pr: int = 7) -> dict:
    """A delivery whose job ran to its end with the review `result` (the pipeline's answer)."""
    recorder.reviews[delivery] = result
    status, _ = await server.post("pull_request", pr_payload(pr, "a" * 40, repo=repo), delivery)
    assert status == 202
    return await server.wait_state(delivery, "done")


async def test_a_delivery_whose_review_failed_shows_as_failed_and_is_redelivered(tmp_path, database_url):
    # A review whose models all failed showed as a green `done` delivery and could not be run again.
    recorder = Recorder()
    async with console_server(tmp_path, recorder, database_url=database_url) as server:
        await _reviewed(server, recorder, "d-review-1", ReviewResult("failed", "no-usable-answer"))
        await _reviewed(server, recorder, "d-approved-1", ReviewResult("approved"), pr=8)
        await _reviewed(server, recorder, "d-skipped-1", ReviewResult("skipped", "filtered"), repo="other/app")
        writer = await session_for(server, ["writer"])
        auditor = await session_for(server, ["auditor"])
        try:
            async with writer.get(server.url + "/console/") as response:
                overview = await response.text()
            assert re.search(r"<dt>failed</dt><dd><a[^>]*>1</a>", overview)
            assert re.search(r"<dt>done</dt><dd><a[^>]*>2</a>", overview)
            assert "d-review-1" in overview and "review failed: no model gave a usable answer" in overview
            async with writer.get(server.url + "/console/deliveries?state=failed") as response:
                failed = await response.text()
            assert "d-review-1" in failed and "d-approved-1" not in failed and "d-skipped-1" not in failed
            assert '<span class="badge tone-bad state-failed">failed</span> <span class="review">review failed' in failed
            async with writer.get(server.url + "/console/deliveries?state=done") as response:
                done = await response.text()
            assert "d-review-1" not in done and "d-approved-1" in done and "review skipped: the pull request" in done
            async with auditor.get(server.url + "/console/") as response:  # narrowed to acme*: counted alike
                assert re.search(r"<dt>failed</dt><dd><a[^>]*>1</a>", await response.text())
            async with writer.get(server.url + "/console/deliveries/d-approved-1") as response:
                approved = await response.text()
            assert "review approved" in approved and "Redeliver" not in approved
            async with writer.get(server.url + "/console/deliveries/d-review-1") as response:
                page = await response.text()
            assert '<span class="badge tone-bad state-failed">failed</span> (its job is done)' in page
            assert "The job ran to its end, but the pull request got no review" in page
            assert "attempt 1: done, review failed (no-usable-answer)" in page and "Redeliver" in page
            assert "finished: failed" in page
            url = server.url + "/console/deliveries/d-review-1/redeliver"
            recorder.reviews["d-review-1"] = ReviewResult("approved")  # the model answers again
            async with writer.post(url, data={"csrf": csrf_of(page)}, allow_redirects=False) as response:
                assert response.status == 303
            async def approved_again() -> dict | None:
                record = await server.store.delivery("d-review-1")
                return record if record and record["review_outcome"] == "approved" else None
            record = await wait_for(approved_again)
            assert (record["state"], record["attempts"], record["received_count"]) == ("done", 2, 2)
            async with writer.get(server.url + "/console/deliveries/d-review-1") as response:
                page = await response.text()
            assert "attempt 2: done, review approved" in page and "Redeliver" not in page
            async with writer.post(url, data={"csrf": csrf_of(page)}, allow_redirects=False) as response:
                assert response.status == 409  # its review completed: not run twice
        finally:
            await writer.close()
            await auditor.close()


async def test_the_timeline_shows_when_the_delivery_was_queued_and_each_wait(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        status, _ = await server.post("pull_request", pr_payload(7, "c" * 40, repo="acme/app"), "d-queued-1")
        assert status == 202
        record = await server.wait_state("d-queued-1", "done")
        admin = await session_for(server, ["admin"])
        try:
            async with admin.get(server.url + "/console/deliveries/d-queued-1") as response:
                page = await response.text()
        finally:
            await admin.close()
    received, queued, started = record["received_at"], record["queued_at"], record["started_at"]
    assert received <= queued <= started
    lines = [f"{when(received)}</time> received",
             f"{when(queued)}</time> queued ({queued - received:.3f} s after it was received)</li>",
             f"{when(started)}</time> started (attempt 1, after {started - queued:.3f} s in the queue)</li>",
             f"{when(record['finished_at'])}</time> finished: done</li>"]
    places = [page.find(line) for line in lines]
    assert -1 not in places and places == sorted(places), (places, page[page.find('id="timeline"'):][:1500])


async def test_a_connector_applied_with_an_error_is_shown_at_its_line_and_not_stored(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        writer = await session_for(server, ["writer"])
        try:
            async with writer.get(server.url + "/console/connectors") as response:
                csrf = csrf_of(await response.text())
            bad = ("apiVersion: resources.service.dev/v3\nkind: ServiceOIDCConnector\nmetadata:\n  name: corp\n"
                   "spec:\n  issuer_url: [not a url]\n  client_id: reviewer\n"
                   f"  client_secret: {CLIENT_SECRET}\n"
                   "  redirect_url: [\"https://reviewer.example.com/v1/webapi/oidc/callback\"]\n"
                   "  claims_to_roles: [{claim: groups, value: admins, roles: [admin]}]\n")
            async with writer.post(server.url + "/console/connectors/apply",
                                   data={"csrf": csrf, "yaml": bad}) as response:
                page = await response.text()
                assert response.status == 422
            assert re.search(r'href="#line-6">line 6, column \d+</a> \(<code>/spec/issuer_url</code>\)', page), page
            assert 'class="line bad" id="line-6"' in page
            async with writer.get(server.url + "/console/connectors/oidcconnectors/corp") as response:
                assert response.status == 404
            good = bad.replace("[not a url]", "https://idp.example.com")
            async with writer.post(server.url + "/console/connectors/apply", data={"csrf": csrf, "yaml": good},
                                   allow_redirects=False) as response:
                assert response.status == 303
                assert response.headers["Location"] == "/console/connectors/oidcconnectors/corp"
            async with writer.get(server.url + "/console/connectors/oidcconnectors/corp") as response:
                page = await response.text()
            assert "SuccessfullyReconciled" in page and "&lt;redacted&gt;" in page
            assert CLIENT_SECRET not in page  # the literal secret never reaches a page
            # applying the redacted copy back keeps the stored secret and changes nothing else
            text = re.search(r'<textarea id="yaml" name="yaml"[^>]*>(.*?)</textarea>', page, re.S).group(1)
            text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&#34;", '"').replace("&#39;", "'")
            async with writer.post(server.url + "/console/connectors/apply", data={"csrf": csrf, "yaml": text},
                                   allow_redirects=False) as response:
                assert response.status == 303, await response.text()
            async with server.http.get(server.url + "/apis/resources.service.dev/v3/oidcconnectors/corp",
                                       headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
                stored = await response.json()
            assert stored["metadata"]["generation"] == 1
        finally:
            await writer.close()


async def test_connectors_write_asks_for_an_mfa_round_when_the_admin_file_requires_it(tmp_path, database_url):
    admin = ACCESS_YAML.replace('required: ["config:write"]', 'required: ["connectors:write"]')
    async with console_server(tmp_path, admin_yaml=admin, database_url=database_url) as server:
        writer = await session_for(server, ["writer"], connector="corp")
        try:
            async with writer.get(server.url + "/console/connectors") as response:
                csrf = csrf_of(await response.text())
            async with writer.post(server.url + "/console/connectors/apply",
                                   data={"csrf": csrf, "yaml": "kind: x"},
                                   headers={"Referer": server.url + "/console/connectors"}) as response:
                page = await response.text()
            assert response.status == 403 and "MFA" in page
            assert "/v1/webapi/oidc/mfa/web?connector_id=corp&amp;redirect_url=%2Fconsole%2Fconnectors" in page
        finally:
            await writer.close()


async def test_the_sign_in_log_shows_the_failed_check(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        await server.app[SIGNIN_STORE].record_signin({
            "at": 1.0, "connector": "corp", "kind": "oidc", "flow": "web", "username": "carol@example.com",
            "ok": False, "roles": [], "check": "no-roles", "message": "no role: no claims_to_roles entry matched",
            "claims": ["email", "groups"], "warnings": []})
        admin = await session_for(server, ["admin"])
        try:
            async with admin.get(server.url + "/console/signins?outcome=failed") as response:
                page = await response.text()
            assert "refused: no-roles" in page and "<code>groups</code>" in page and "carol@example.com" in page
        finally:
            await admin.close()


async def test_pages_carry_a_strict_csp_and_static_files_are_the_apps_own(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        async with server.http.get(server.url + "/console/login") as response:
            csp = response.headers["Content-Security-Policy"]
            page = await response.text()
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
        assert "frame-ancestors 'none'" in csp
        assert '<label for="username">' in page and page.count("<h1>") == 1
        for name, kind in (("console.css", "text/css"), ("console.js", "text/javascript")):
            async with server.http.get(f"{server.url}/console/static/{name}") as response:
                assert response.status == 200 and response.content_type == kind
        for name in ("..%2Fconsole%2Frender.py", "missing.css", "..%2F__init__.py"):
            async with server.http.get(f"{server.url}/console/static/{name}") as response:
                assert response.status == 404, name


async def test_the_overview_counts_the_last_day_and_shows_a_failed_admin_reload(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, database_url=database_url) as server:
        await failed_delivery(server, recorder, "d-over-1")
        await failed_delivery(server, recorder, "d-over-2", repo="other/app")
        admin_file = tmp_path / "admin.yaml"
        admin_file.write_text("access: [not, a, mapping]\n")
        holder = server.app[__import__("bot.server.app", fromlist=["ADMIN"]).ADMIN]
        assert holder.reload_if_changed() is False
        admin = await session_for(server, ["admin"])
        auditor = await session_for(server, ["auditor"])
        try:
            async with admin.get(server.url + "/console/") as response:
                page = await response.text()
            assert re.search(r"<dt>failed</dt><dd><a[^>]*>2</a>", page)
            assert "d-over-1" in page and "the last reload failed" in page and "admin.yaml:1:" in page
            async with auditor.get(server.url + "/console/") as response:
                page = await response.text()
            assert re.search(r"<dt>failed</dt><dd><a[^>]*>1</a>", page)  # acme* only
            assert "d-over-1" in page and "d-over-2" not in page
        finally:
            await admin.close()
            await auditor.close()


async def test_the_timeline_keeps_each_outgoing_call_and_is_pruned_with_its_delivery(tmp_path, database_url):
    calls: list[str] = []

    async def answer(request: web.Request) -> web.Response:
        calls.append(request.path_qs)
        return web.json_response({}, status=201 if request.method == "POST" else 200)

    double = web.Application()
    double.router.add_route("*", "/{tail:.*}", answer)

    async with serving(double) as github, serving(double) as model:
        def handler_for(context):
            async def handle(job):  # a job that calls GitHub twice and a model once, then fails
                for method, url in (("GET", f"{github}/repos/acme/app/pulls/7"),
                                    ("PATCH", f"{github}/repos/acme/app/check-runs/42"),
                                    ("POST", f"{model}/v1/chat/completions?key=model-key-in-query")):
                    async with context.http.request(method, url) as response:
                        await response.read()
                raise RuntimeError("the review could not be posted")
            return handle

        async with server_with(tmp_path, handler_for, database_url, GITHUB_API_URL=github) as server:
            status, _ = await server.post("pull_request", pr_payload(7, "b" * 40, repo="acme/app"), "d-time-1")
            assert status == 202
            await server.wait_state("d-time-1", "failed")
            admin = await session_for(server, ["admin"])
            try:
                async with admin.get(server.url + "/console/deliveries/d-time-1") as response:
                    page = await response.text()
            finally:
                await admin.close()
            assert len(calls) == 3
            assert "2 GitHub calls, 1 model call" in page
            assert "<code>PATCH /repos/acme/app/check-runs/42</code>" in page
            assert "https://github.com/acme/app/runs/42" in page
            assert "model-key-in-query" not in page  # a query is never kept
            assert "the review could not be posted" in page
            timeline = server.app[STORAGE].timeline
            [attempt] = await read_attempts(timeline, "d-time-1")
            assert [(c.kind, c.status) for c in attempt.calls] == [("github", 200), ("github", 200),
                                                                   ("model", 201)]
            assert all(c.seconds >= 0 for c in attempt.calls)
            assert await server.store.prune(before=2e10, limit=100) == 1  # with its timeline rows
            assert await timeline.attempts("d-time-1") == []
