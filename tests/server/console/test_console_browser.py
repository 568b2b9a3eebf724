"""The console in a real browser (headless Chromium through Playwright): sign in through a local
OpenID provider with identifier-first login and land back on the page asked for; open every page;
redeliver a failed delivery; apply a connector with an error and see it at its line; be refused
a page without the permission; the CSP stops inline script; the pages fit a phone's width; test
a SAML connector's sign-in; the README's screenshot script runs. Skipped, saying why, without a
browser."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.events.jobs import ReviewResult
from scripts.console_screenshot import capture
from tests.support.browser_support import browser_missing, chromium
from tests.support.console_support import console_server, failed_delivery, session_for
from tests.support.oidc_support import connector_doc, put_connector, real_provider
from tests.support.saml_support import SamlIdP, put_saml, require_xmlsec
from tests.support.server_support import Recorder, pr_payload, wait_for

MISSING = browser_missing()
if MISSING and os.environ.get("REVIEWER_TEST_REQUIRE_BROWSER") == "1":
    raise RuntimeError(f"REVIEWER_TEST_REQUIRE_BROWSER=1 but {MISSING}")
pytestmark = [pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
              pytest.mark.slow]  # a headless Chromium per test: `make test-fast` leaves it out

BAD_CONNECTOR = """\
apiVersion: resources.service.dev/v3
kind: ServiceOIDCConnector
metadata:
  name: broken
spec:
  issuer_url: 12345
  client_id: reviewer
  client_secret: file://client-secret
  redirect_url: ["https://reviewer.example.com/v1/webapi/oidc/callback"]
  claims_to_roles: [{claim: groups, value: admins, roles: [admin]}]
"""


UNLABELLED = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
    .filter(el => !(el.labels && el.labels.length) && !el.textContent.trim() && !el.getAttribute('aria-label'))
    .map(el => el.outerHTML)"""


async def one_h1(page) -> str:
    headings = await page.locator("h1").all_inner_texts()
    assert len(headings) == 1, headings
    return headings[0]


async def test_an_operator_works_through_the_console_in_a_browser(tmp_path):
    recorder = Recorder()
    with real_provider() as issuer:
        async with console_server(tmp_path, recorder) as server, chromium() as browser:
            async with server.http.put(f"{issuer}/users/dana", json={"email": "dana@example.com",
                                                                      "groups": ["admins"]}) as response:
                assert response.status == 204
            await put_connector(server, connector_doc("mock", issuer, server.url, display="Example IdP",
                                                      user_matchers=["*@example.com"]))
            await failed_delivery(server, recorder, "d-browser-1", repo="acme/app")

            context = await browser.new_context()
            page = await context.new_page()
            errors: list[str] = []
            page.on("console", lambda message: errors.append(f"{message.text} @ {message.location['url']}")
                    if message.type == "error" else None)

            # signed out: sent to the login page, then identifier-first straight to the one provider
            await page.goto(f"{server.url}/console/deliveries?state=failed")
            assert "/console/login?next=" in page.url
            await page.get_by_label("Username").fill("dana@example.com")
            await page.get_by_role("button", name="Continue").click()
            await page.wait_for_url(f"{issuer}/oauth2/authorize*")
            await page.fill("input[name=sub]", "dana")
            await page.get_by_role("button", name="Authorize").click()
            await page.wait_for_url(f"{server.url}/console/deliveries?state=failed")
            assert await one_h1(page) == "Deliveries"

            # every page opens, with one h1
            for path, h1 in (("/console/", "Overview"), ("/console/deliveries", "Deliveries"),
                             ("/console/deliveries/d-browser-1", "Delivery d-browser-1"),
                             ("/console/repos/acme/app", "acme/app"), ("/console/connectors", "Connectors"),
                             ("/console/connectors/oidcconnectors/mock", "mock"), ("/console/signins", "Sign-ins")):
                response = await page.goto(server.url + path)
                assert response.status == 200, path
                assert await one_h1(page) == h1
                assert await page.evaluate(UNLABELLED) == [], path  # every control has a label
            await page.keyboard.press("Tab")  # the keyboard's first stop skips to the content
            assert await page.evaluate("document.activeElement.textContent") == "Skip to content"
            assert "signed in" in await page.content()  # dana's sign-in is in the log

            # test sign-in: the flow runs, the claims and roles come back once, no session is made
            session_before = [c for c in await context.cookies() if c["name"] == "reviewer_session"]
            await page.goto(f"{server.url}/console/connectors/oidcconnectors/mock")
            await page.get_by_role("link", name="Test sign-in").click()
            await page.wait_for_url(f"{issuer}/oauth2/authorize*")
            await page.fill("input[name=sub]", "dana")
            await page.get_by_role("button", name="Authorize").click()
            await page.wait_for_url(f"{server.url}/console/connectors/oidcconnectors/mock?test=*")
            tested = await page.locator("#tested").locator("xpath=..").inner_text()
            assert "Test sign-in: dana@example.com" in tested and '["admins"]' in tested
            assert "Roles the claims map to\nadmin" in tested
            assert [c for c in await context.cookies() if c["name"] == "reviewer_session"] == session_before
            await page.reload()
            assert await page.locator("#tested").count() == 0  # shown once

            # redeliver the failed delivery (the confirmation is accepted)
            recorder.fail.pop("d-browser-1")
            page.on("dialog", lambda dialog: dialog.accept())
            await page.goto(f"{server.url}/console/deliveries/d-browser-1")
            async with page.expect_navigation():  # the form posts, then the page comes back (303)
                await page.get_by_role("button", name="Redeliver").click()
            await server.wait_state("d-browser-1", "done")
            await page.goto(f"{server.url}/console/deliveries/d-browser-1")
            assert "attempt 2: done" in await page.content()

            # apply a connector with an error: shown at its line, focus on the list of errors
            await page.goto(f"{server.url}/console/connectors")
            await page.get_by_label("Connector YAML").fill(BAD_CONNECTOR)
            await page.get_by_role("button", name="Apply").click()
            bad_line = page.locator(".line.bad")
            assert await bad_line.count() >= 1
            assert "issuer_url" in await page.locator("#line-6").inner_text()
            assert await page.evaluate("document.activeElement.className") == "errors"

            # the CSP allows no inline script: a script injected into the page does not run
            violations = await page.evaluate("""() => new Promise(resolve => {
                document.addEventListener('securitypolicyviolation', e => resolve(e.violatedDirective));
                const s = document.createElement('script');
                s.textContent = 'window.injected = true';
                document.body.appendChild(s);
            })""")
            assert violations.startswith("script-src")
            assert await page.evaluate("window.injected === undefined")
            assert await page.evaluate("document.documentElement.dataset.js") == "ready"  # its own script runs

            # at a phone's width nothing overflows sideways
            await page.set_viewport_size({"width": 375, "height": 740})
            for path in ("/console/", "/console/deliveries", "/console/deliveries/d-browser-1"):
                await page.goto(server.url + path)
                assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
            ours = [e for e in errors if server.url in e or e.endswith("@ ")]  # the provider's page is not ours
            expected = ["status of 422", "Content Security Policy directive 'script-src"]  # the bad YAML; the test
            assert not [e for e in ours if not any(x in e for x in expected)], ours
            await context.close()

            # refused: a session whose roles lack config:read on the account sees 403, not the page
            auditor = await session_for(server, ["auditor", "watcher"])
            cookie = next(c for c in auditor.cookie_jar if c.key == "reviewer_session")
            await auditor.close()
            context = await browser.new_context()
            await context.add_cookies([{"name": "reviewer_session", "value": cookie.value, "url": server.url}])
            page = await context.new_page()
            response = await page.goto(f"{server.url}/console/repos/other/app")
            assert response.status == 403
            assert await one_h1(page) == "Not allowed"
            assert "lacks the permission config:read on account other" in await page.content()
            response = await page.goto(f"{server.url}/console/repos/acme/app")  # its own account's page
            assert response.status == 200 and await one_h1(page) == "acme/app"
            await page.goto(f"{server.url}/console/connectors")  # connectors:read, but not :write
            assert await one_h1(page) == "Connectors"
            assert await page.get_by_role("button", name="Apply").count() == 0
            await context.close()


async def test_a_delivery_whose_review_failed_is_a_failure_and_is_redelivered_in_a_browser(tmp_path):
    # A review whose models all failed was a green `done` delivery with no Redeliver button.
    recorder = Recorder()
    recorder.reviews["d-review-1"] = ReviewResult("failed", "no-usable-answer")
    async with console_server(tmp_path, recorder) as server, chromium() as browser:
        status, _ = await server.post("pull_request", pr_payload(7, "a" * 40, repo="acme/app"), "d-review-1")
        assert status == 202
        await server.wait_state("d-review-1", "done")
        writer = await session_for(server, ["writer"])
        cookie = next(c for c in writer.cookie_jar if c.key == "reviewer_session")
        await writer.close()
        context = await browser.new_context()
        await context.add_cookies([{"name": "reviewer_session", "value": cookie.value, "url": server.url}])
        page = await context.new_page()
        await page.goto(f"{server.url}/console/")
        assert await page.locator(".tile.state-failed dd").inner_text() == "1"
        await page.get_by_role("link", name="pull_request.synchronize on acme/app").click()
        await page.wait_for_url(f"{server.url}/console/deliveries/d-review-1")
        assert await page.locator(".badge.state-failed").first.inner_text() == "failed"
        assert "review failed: no model gave a usable answer" in await page.content()
        recorder.reviews["d-review-1"] = ReviewResult("findings")  # the models answer again
        page.on("dialog", lambda dialog: dialog.accept())
        async with page.expect_navigation():
            await page.get_by_role("button", name="Redeliver").click()

        async def reviewed_again() -> bool:
            record = await server.store.delivery("d-review-1")
            return bool(record and record["review_outcome"] == "findings")
        await wait_for(reviewed_again)
        await page.goto(f"{server.url}/console/deliveries/d-review-1")
        assert "attempt 2: done, review findings" in await page.content()
        assert await page.get_by_role("button", name="Redeliver").count() == 0
        assert await page.locator(".badge.state-done").first.inner_text() == "done"
        await context.close()


async def test_a_saml_connector_is_tested_in_a_browser(tmp_path):
    """Test sign-in through a real SAML IdP (pysaml2's): its answer posted to the assertion
    consumer, the attributes shown on the connector's page, the browser's session unchanged."""
    require_xmlsec()
    idp = SamlIdP(attributes={"groups": ["admins"], "department": ["platform"]})
    async with idp.serving(), console_server(tmp_path) as server, chromium() as browser:
        await put_saml(server, idp.connector("corp", server.url), idp)
        writer = await session_for(server, ["writer"])
        cookie = next(c for c in writer.cookie_jar if c.key == "reviewer_session")
        await writer.close()
        context = await browser.new_context()
        await context.add_cookies([{"name": "reviewer_session", "value": cookie.value, "url": server.url}])
        page = await context.new_page()
        await page.goto(f"{server.url}/console/connectors/samlconnectors/corp")
        await page.get_by_role("link", name="Test sign-in").click()
        await page.wait_for_url(f"{idp.url}/sso*")
        await page.evaluate("document.forms[0].submit()")  # the IdP's answer page: the user goes on
        await page.wait_for_url(f"{server.url}/console/connectors/samlconnectors/corp?test=*")
        tested = await page.locator("#tested").locator("xpath=..").inner_text()
        assert "Test sign-in: alice@example.com" in tested and '["platform"]' in tested
        assert "Attributes received" in tested and "Roles the attributes map to\nadmin" in tested
        assert [c["value"] for c in await context.cookies() if c["name"] == "reviewer_session"] == [cookie.value]
        await context.close()


async def test_the_readme_screenshot_script_renders_the_console(tmp_path):
    out = tmp_path / "console.png"
    files = await capture(tmp_path, out, width=800, height=600)
    for file in files:
        data = Path(file).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
