"""The repositories page and a pull request's page over HTTP, on SQLite and on PostgreSQL (the
`database_url` fixture): the repositories the installations cover, each with its last review and
outcome, narrowed to the viewer's accounts; a pull request's deliveries over time with their
reviews' outcomes. Unknown pages answer 404 inside the console's frame."""

from __future__ import annotations

import re

from bot.events.jobs import ReviewResult
from scripts.console_screenshot import installed
from tests.support.console_support import console_server, session_for
from tests.support.server_support import Recorder, pr_payload


def _row(page: str, repo: str) -> str:
    found = re.search(rf'<tr>\s*<td><a href="/console/repos/{repo}">.*?</tr>', page, re.S)
    assert found, (repo, page)
    return found.group(0)


async def test_repositories_and_a_pull_requests_reviews(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, database_url=database_url) as server:
        status, _ = await server.post("installation", installed(["acme/app", "acme/web", "other/lib"]), "inst-1")
        assert status == 202
        await server.wait_state("inst-1", "done")
        for delivery, number, head, result in (("d-1", 7, "a" * 40, ReviewResult("findings")),
                                               ("d-2", 7, "b" * 40, ReviewResult("approved")),
                                               ("d-3", 8, "c" * 40, ReviewResult("skipped", "filtered")),
                                               ("d-4", 9, "d" * 40, ReviewResult("failed", "no-usable-answer"))):
            recorder.reviews[delivery] = result
            repo = "other/lib" if number == 9 else "acme/app"
            status, _ = await server.post("pull_request", pr_payload(number, head, repo=repo), delivery)
            assert status == 202
            await server.wait_state(delivery, "done")
        admin = await session_for(server, ["admin"])
        auditor = await session_for(server, ["auditor"])  # deliveries:read on acme* only
        try:
            async with admin.get(server.url + "/console/repos") as response:
                assert response.status == 200
                page = await response.text()
            app = _row(page, "acme/app")
            assert "review skipped" in app and "does not pass filterExpr" in app and "pulls/8" in app  # the newest
            assert "none yet" in _row(page, "acme/web")
            lib = _row(page, "other/lib")
            assert "tone-bad state-failed" in lib and "no model gave a usable answer" in lib
            async with auditor.get(server.url + "/console/repos") as response:
                page = await response.text()
            assert "acme/app" in page and "other/lib" not in page

            async with admin.get(server.url + "/console/repos/acme/app/pulls/7") as response:
                assert response.status == 200
                page = await response.text()
            rows = re.findall(r"<tr>\s*<td><a href=\"/console/deliveries/(d-\d)\">", page)
            assert rows == ["d-2", "d-1"]  # newest first, only this pull request's
            assert "review approved" in page and "review findings" in page and "<code>bbbbbbb</code>" in page
            async with auditor.get(server.url + "/console/repos/other/lib/pulls/9") as response:
                assert response.status == 403
            for bad in ("/console/repos/acme/app/pulls/0", "/console/repos/acme/app/pulls/99999999999",
                        "/console/repos/-x/app/pulls/1"):
                async with admin.get(server.url + bad) as response:
                    assert response.status == 404, bad
        finally:
            await admin.close()
            await auditor.close()


async def test_unknown_pages_answer_404_inside_the_console(tmp_path, database_url):
    async with console_server(tmp_path, database_url=database_url) as server:
        admin = await session_for(server, ["admin"])
        try:
            async with admin.get(server.url + "/console/nothing/here") as response:
                page = await response.text()
                assert response.status == 404 and response.content_type == "text/html"
            assert "<h1>No such page</h1>" in page and 'href="/console/deliveries"' in page and "Sign out" in page
            assert "default-src 'none'" in response.headers["Content-Security-Policy"]
        finally:
            await admin.close()
        async with server.http.get(server.url + "/console/nothing/here", allow_redirects=False) as response:
            page = await response.text()
            assert response.status == 404 and "<h1>No such page</h1>" in page and "Sign out" not in page
        async with server.http.get(server.url + "/console/static/missing.css") as response:
            assert response.status == 404 and "<h1>" not in await response.text()
        async with server.http.get(server.url + "/elsewhere") as response:
            assert response.status == 404 and "<h1>" not in await response.text()  # outside the console


async def test_a_pull_request_page_with_odd_characters_in_its_path_is_not_found(tmp_path):
    """Digits of other scripts (`²`, `١٢`), a sign, and an owner or a repository name ending in a
    newline are no GitHub pull request: 404, never a server error nor a page for a name GitHub
    cannot have."""
    async with console_server(tmp_path) as server:
        admin = await session_for(server, ["admin"])
        try:
            for bad in ("/console/repos/acme/app/pulls/%C2%B2", "/console/repos/acme/app/pulls/%D9%A1%D9%A2",
                        "/console/repos/acme/app/pulls/+7", "/console/repos/acme%0A/app/pulls/7",
                        "/console/repos/acme/app%0A/pulls/7"):
                async with admin.get(server.url + bad) as response:
                    assert response.status == 404, bad
                    assert "<h1>" in await response.text()
        finally:
            await admin.close()
