"""The console's audit log in a real browser (headless Chromium through Playwright): an operator
opens it from the menu, sees who changed what from where, filters by action and by time, is told
which filter is wrong, and pages on; a viewer narrowed to an account sees only that account's
entries, and one without `audit:read` gets no menu entry and a 403. Skipped, saying why, without a
browser."""

from __future__ import annotations

import os

import pytest

from bot.events.jobs import ReviewResult
from tests.support.browser_support import browser_missing, chromium
from tests.support.console_support import console_server, session_for
from tests.support.oidc_support import ADMIN_TOKEN, connector_doc, put_connector
from tests.support.server_support import Recorder, Server, pr_payload

MISSING = browser_missing()
if MISSING and os.environ.get("REVIEWER_TEST_REQUIRE_BROWSER") == "1":
    raise RuntimeError(f"REVIEWER_TEST_REQUIRE_BROWSER=1 but {MISSING}")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

ACCESS = """\
access:
  roles:
    admin:      {allow: ["*"]}
    acme-audit: {allow: ["audit:read"], accounts: ["acme*"]}
    writer:     {allow: ["connectors:read", "connectors:write", "deliveries:read", "deliveries:write"]}
"""


async def _redelivered(server: Server, recorder: Recorder, delivery: str, repo: str, pr: int) -> None:
    recorder.reviews[delivery] = ReviewResult("failed", "no-usable-answer")
    status, _ = await server.post("pull_request", pr_payload(pr, "a" * 40, repo=repo), delivery)
    assert status == 202
    await server.wait_state(delivery, "done")
    async with server.http.post(f"{server.url}/api/deliveries/{delivery}/redeliver",
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
        assert response.status == 202


async def _page_as(browser, server: Server, roles: list[str], connector: str):
    session = await session_for(server, roles, connector=connector)
    cookie = next(c for c in session.cookie_jar if c.key == "reviewer_session")
    await session.close()
    context = await browser.new_context()
    await context.add_cookies([{"name": "reviewer_session", "value": cookie.value, "url": server.url}])
    return context, await context.new_page()


async def test_an_operator_reads_and_filters_the_audit_log_in_a_browser(tmp_path):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, admin_yaml=ACCESS) as server, chromium() as browser:
        for name in ("okta", "entra"):
            await put_connector(server, connector_doc(name, "http://127.0.0.1:9", server.url))
        await _redelivered(server, recorder, "d-acme", "acme/app", 7)
        await _redelivered(server, recorder, "d-other", "other/app", 8)

        context = await browser.new_context()  # the break-glass token, through the login form
        page = await context.new_page()
        await page.goto(f"{server.url}/console/login?next=/console/deliveries")
        await page.get_by_label("Admin token").fill(ADMIN_TOKEN)
        await page.get_by_role("button", name="Sign in with the token").click()
        await page.wait_for_url(f"{server.url}/console/deliveries")
        await page.get_by_role("link", name="Audit").click()
        await page.wait_for_url(f"{server.url}/console/audit")
        assert await page.locator("h1").all_inner_texts() == ["Audit log"]
        rows = await page.locator("tbody tr").all_inner_texts()
        assert len(rows) == 5 and "signin.break-glass" in rows[0] and "flow: console" in rows[0]  # this sign-in
        assert "delivery.redeliver" in rows[1] and "d-other" in rows[1]
        assert "break-glass token" in rows[1] and "127.0.0.1" in rows[1] and "other" in rows[1]
        assert "connector.apply" in rows[4] and "oidcconnectors/okta" in rows[4] and "spec.client_secret" in rows[4]

        await page.get_by_label("Action").select_option("connector.apply")
        await page.get_by_role("button", name="Filter").click()
        await page.wait_for_url("**/console/audit?*action=connector.apply*")
        rows = await page.locator("tbody tr").all_inner_texts()
        assert len(rows) == 2 and all("connector.apply" in row for row in rows)
        assert await page.get_by_role("link", name="d-other").count() == 0

        await page.get_by_label("Since").fill("next tuesday")
        await page.get_by_role("button", name="Filter").click()
        await page.wait_for_url("**/console/audit?*since=next*")
        error = page.get_by_role("alert")
        assert (await error.inner_text()).startswith("since: 'next tuesday' is not an ISO 8601 time")
        assert await page.locator("tbody tr").count() == 0

        await page.goto(f"{server.url}/console/audit?limit=3")  # paging goes on with the filters kept
        assert await page.locator("tbody tr").count() == 3
        await page.get_by_role("link", name="Older entries").click()
        await page.wait_for_url("**/console/audit?*before=*")
        assert await page.locator("tbody tr").count() == 2
        await page.get_by_role("link", name="Audit").click()
        await page.get_by_role("link", name="d-acme").click()  # a redelivery links to its delivery
        await page.wait_for_url(f"{server.url}/console/deliveries/d-acme")
        await context.close()

        context, page = await _page_as(browser, server, ["acme-audit"], "mock")
        await page.goto(f"{server.url}/console/audit")
        rows = await page.locator("tbody tr").all_inner_texts()
        assert len(rows) == 1 and "d-acme" in rows[0]  # not the other account's, not the connectors'
        await context.close()

        context, page = await _page_as(browser, server, ["writer"], "mock2")
        await page.goto(f"{server.url}/console/connectors")
        assert await page.get_by_role("link", name="Audit").count() == 0
        response = await page.goto(f"{server.url}/console/audit")
        assert response.status == 403 and "lacks the permission audit:read" in await page.content()
        await context.close()
