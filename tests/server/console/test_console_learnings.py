"""`/console/learnings` in headless Chromium (skipped, saying why, without a browser) and over HTTP:
the learnings listed with their source links, edited (a bad glob shown at its field) and deleted;
the resolution-rate chart and the most dismissed rules from the followed findings; a grant narrowed
to accounts sees and touches only its accounts' learnings."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

from bot.learnings.followed import Followed
from bot.learnings.model import Learning, Scope, Source
from bot.learnings.outcomes import Mark, Tracked
from bot.server.app import LEARNINGS
from tests.support.browser_support import browser_missing, chromium
from tests.support.console_support import console_server, csrf_of, session_for

MISSING = browser_missing()
if MISSING and os.environ.get("REVIEWER_TEST_REQUIRE_BROWSER") == "1":
    raise RuntimeError(f"REVIEWER_TEST_REQUIRE_BROWSER=1 but {MISSING}")

ACCESS = """\
access:
  roles:
    admin: {allow: ["*"]}
    acme:  {allow: ["learnings:read", "learnings:write"], accounts: ["acme*"]}
"""
NOW = datetime.now(UTC).replace(microsecond=0)
OURS = Learning("00000000000000aa", Scope("acme", "app", ("src/**",)), "suppress", "Division by zero when b is 0.",
                NOW - timedelta(days=1), category="bug",
                source=Source("https://github.com/acme/app/pull/7#discussion_r11", "alice"))
THEIRS = Learning("00000000000000bb", Scope("other"), "guide", "Money is integers of cents.", NOW,
                  source=Source(None, "bob"))


async def _seed(server) -> None:
    store = server.app[LEARNINGS]
    await store.add(OURS)
    await store.add(THEIRS)
    posted = NOW - timedelta(days=8)
    rows = []
    for n, (state_mark, rule) in enumerate([("changed", "no-div"), ("dismissed", "no-div"), (None, "no-div"),
                                             ("changed", "style")]):
        mark = Mark(posted + timedelta(hours=1), "bob", "push" if state_mark == "changed" else "reaction")
        tracked = Tracked(f"fp{n}", "src/calc.py", 6, 6, "a" * 40, posted, (rule,), "bug",
                          changed=mark if state_mark == "changed" else None,
                          dismissed=mark if state_mark == "dismissed" else None)
        rows.append(Followed("acme/app#7", "acme", "app", tracked, "msg"))
    await store.follow(rows)


async def _browser_session(server, browser, roles):
    holder = await session_for(server, roles)
    cookie = next(c for c in holder.cookie_jar if c.key == "reviewer_session")
    await holder.close()
    context = await browser.new_context()
    await context.add_cookies([{"name": "reviewer_session", "value": cookie.value, "url": server.url}])
    return context


@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
async def test_learnings_are_listed_charted_edited_and_deleted_in_a_browser(tmp_path):
    async with console_server(tmp_path, admin_yaml=ACCESS) as server, chromium() as browser:
        await _seed(server)
        context = await _browser_session(server, browser, ["admin"])
        page = await context.new_page()
        errors: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("dialog", lambda dialog: dialog.accept())
        await page.goto(f"{server.url}/console/")
        await page.get_by_role("link", name="Learnings").click()
        await page.wait_for_url(f"{server.url}/console/learnings")
        assert await page.locator("h1").inner_text() == "Learnings"
        assert await page.locator("svg.chart").count() == 2
        assert "2 resolved, 1 dismissed, 1 open" in " ".join((await page.locator("main p").first.inner_text()).split())
        dismissed = await page.locator("#dismissed ~ table tbody tr").all_inner_texts()
        assert [d.split() for d in dismissed] == [["rule", "no-div", "1", "3"], ["category", "bug", "1", "4"]]
        row = page.locator(f"tr[id='{OURS.id}']")
        assert await row.get_by_role("link", name="comment").get_attribute("href") == OURS.source.url
        assert "by alice" in await row.inner_text()

        await row.get_by_label("Paths").fill("src/[")
        async with page.expect_navigation():
            await row.get_by_role("button", name="Save").click()
        alert = await page.locator(f"tr[id='{OURS.id}'] [role=alert]").first.inner_text()
        assert "/scope/paths/0" in alert and "glob" in alert
        row = page.locator(f"tr[id='{OURS.id}']")
        await row.get_by_label("Paths").fill("src/calc/**\nlib/**")
        await row.get_by_label("Text").fill("Division by zero when b is 0. We check b upstream.")
        async with page.expect_navigation():
            await row.get_by_role("button", name="Save").click()
        changed = await server.app[LEARNINGS].get(OURS.id)
        assert changed.scope.paths == ("src/calc/**", "lib/**") and changed.text.endswith("upstream.")
        async with page.expect_navigation():
            await page.locator(f"tr[id='{THEIRS.id}']").get_by_role("button", name="Delete").click()
        assert await server.app[LEARNINGS].get(THEIRS.id) is None
        assert await page.locator(f"tr[id='{THEIRS.id}']").count() == 0
        assert [e for e in errors if "status of 422" not in e] == []  # the refused edit answered 422
        await context.close()


async def test_a_narrowed_grant_sees_and_changes_only_its_accounts_learnings(tmp_path):
    async with console_server(tmp_path, admin_yaml=ACCESS) as server:
        await _seed(server)
        holder = await session_for(server, ["acme"])
        try:
            async with holder.get(server.url + "/console/learnings") as response:
                html = await response.text()
            assert response.status == 200 and OURS.id in html and THEIRS.id not in html
            assert "Money is integers" not in html
            csrf = csrf_of(html)
            for action in ("delete", "edit"):
                async with holder.post(f"{server.url}/console/learnings/{THEIRS.id}/{action}",
                                       data={"csrf": csrf, "text": "mine", "paths": ""},
                                       allow_redirects=False) as response:
                    assert response.status == 404, action
            async with holder.post(f"{server.url}/console/learnings/{OURS.id}/delete", data={"csrf": "0" * 64},
                                   allow_redirects=False) as response:
                assert response.status == 403  # a wrong CSRF token
            assert await server.app[LEARNINGS].get(THEIRS.id) == THEIRS
            assert await server.app[LEARNINGS].get(OURS.id) == OURS
            async with holder.post(f"{server.url}/console/learnings/{OURS.id}/delete", data={"csrf": csrf},
                                   allow_redirects=False) as response:
                assert response.status == 303
            assert await server.app[LEARNINGS].get(OURS.id) is None
        finally:
            await holder.close()
