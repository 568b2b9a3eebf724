"""The console in Chromium after the real pipeline reviewed a pull request (GitHub double, chat
double): the check run's Markdown rendered (and its hostile parts inert), the index line said once,
the delivery page fitting a 1280-pixel window, the repositories page and the pull request's
reviews and findings; success and failure told apart by colour and text with a contrast of at
least 4.5:1; times in the viewer's zone with the UTC value on hover (the UTC without script); an
unknown page answered inside the console's frame; the sign-in refusal linking back; the sessions
page. Skipped, saying why, without a browser."""

from __future__ import annotations

import os

import aiohttp
import pytest

from tests.support.app_support import running_app
from tests.support.browser_support import browser_missing, chromium
from tests.support.chat_double import ChatDouble, findings
from tests.support.review_support import API_KEY, BUG, KEY_VAR, NIT, PRIMARY, admin_yaml, config_pull, runs_done

MISSING = browser_missing()
if MISSING and os.environ.get("REVIEWER_TEST_REQUIRE_BROWSER") == "1":
    raise RuntimeError(f"REVIEWER_TEST_REQUIRE_BROWSER=1 but {MISSING}")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

TOKEN = "admin-token-for-console-browser-review"

# WCAG 2.x contrast of two CSS colours as the browser computed them (`rgb(r, g, b)`).
CONTRAST = """el => {
  const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, b] = rgb(c).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  let node = el, bg = 'rgba(0, 0, 0, 0)';
  while (node && (bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent')) { bg = getComputedStyle(node).backgroundColor; node = node.parentElement; }
  const fg = getComputedStyle(el).color;
  const [a, b] = [lum(fg), lum(bg === 'rgba(0, 0, 0, 0)' ? 'rgb(255, 255, 255)' : bg)];
  return {fg, bg, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05),
          mark: getComputedStyle(el, '::before').content, text: el.innerText};
}"""
NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"
SCROLLED = "[...document.querySelectorAll('.scroll, pre, .markdown')].filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.outerHTML.slice(0, 120))"


async def test_a_reviewed_pull_request_in_the_console(tmp_path, github, github_app, app_private_key, monkeypatch):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    chat = await ChatDouble(api_key=API_KEY).start()
    # the model's words carry a script, a javascript: link and an image: none may act on the page
    hostile = dict(BUG, message="Off by one. <script>window.owned = 1</script> [see](javascript:window.owned=2) "
                                "![x](https://evil.example/p.png) [docs](https://docs.python.org/3/)")
    chat.answer(PRIMARY, findings(hostile, NIT))
    try:
        async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin_yaml(chat, 5),
                               REVIEWER_ADMIN_TOKEN=TOKEN) as world, chromium() as browser:
            installed = github.payload("installation", "created", installation=world.installation)
            assert (await world.deliver("installation", installed, delivery_id="d-install"))[0] == 202
            pr = config_pull(world, "feedback: detailed\n")
            payload = github.payload("pull_request", "opened", installation=world.installation, pull=pr)
            assert (await world.deliver("pull_request", payload, delivery_id="d-review"))[0] == 202
            [run] = await runs_done(world, pr)
            full_name = pr.repo.full_name

            context = await browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Tokyo")
            page = await context.new_page()
            await page.goto(f"{world.url}/console/login?next=/console/deliveries/d-review")
            await page.fill("#token", TOKEN)
            await page.click("text=Sign in with the token")
            await page.wait_for_url(f"{world.url}/console/deliveries/d-review")

            # the summary is rendered Markdown, the review's hostile parts inert
            summary = page.locator(".summary")
            assert await summary.locator("h2", has_text="The plan").count() == 1
            assert "###" not in await summary.inner_text()
            assert await page.evaluate("window.owned") is None
            assert await page.locator("main script, main img").count() == 0
            assert await page.locator("a[href^='javascript:']").count() == 0
            assert await page.locator("a[href='https://docs.python.org/3/']").count() >= 1
            content = await page.content()
            assert content.count("Repository index:") == 1 and run.output["summary"].count("Repository index:") == 1, content.count("Repository index:")

            # the page fits a 1280-pixel window: nothing overflows sideways, not even the timeline's table
            assert await page.evaluate(NO_OVERFLOW)
            assert await page.evaluate(SCROLLED) == []

            # success and failure: different colours and marks, each readable (contrast at least 4.5:1)
            await page.goto(f"{world.url}/console/repos/{full_name}/pulls/{pr.number}")
            done = await page.locator(".badge.tone-good").first.evaluate(CONTRAST)  # the delivery: done
            bad = await page.locator(".badge.tone-bad").first.evaluate(CONTRAST)  # the check run: failure
            neutral = await page.locator(".badge.tone-neutral").first.evaluate(CONTRAST)  # a finding: posted
            for look in (done, bad, neutral):
                assert look["ratio"] >= 4.5, look
            assert done["text"] == "done" and bad["text"] == "failure", (done, bad)
            assert done["fg"] != bad["fg"] and done["bg"] != bad["bg"], (done, bad)
            assert "✓" in done["mark"] and "✗" in bad["mark"], (done, bad)

            # the repositories page: the installation's repository and its last review
            await page.goto(f"{world.url}/console/repos")
            row = page.locator("tr", has_text=full_name)
            assert "review findings" in await row.inner_text()
            await row.get_by_role("link", name=f"pull request #{pr.number}").click()
            await page.wait_for_url(f"{world.url}/console/repos/{full_name}/pulls/{pr.number}")
            reviews = await page.locator("#reviews").locator("xpath=..").inner_text()
            assert "pull_request.opened" in reviews and pr.head_sha[:7] in reviews and run.output["title"] in reviews
            found = await page.locator("#findings").locator("xpath=..").inner_text()
            assert "src/calc.py" in found and "posted" in found and pr.head_sha[:7] in found

            # times: in the viewer's zone (Tokyo), the UTC value on hover
            moment = page.locator("time").first
            utc_text = await moment.get_attribute("title")
            assert utc_text.endswith(" UTC") and "GMT+9" in await moment.inner_text()
            stamp = await moment.get_attribute("datetime")
            assert stamp[:10] in utc_text and stamp[11:19] in utc_text

            # an unknown page: 404 inside the console's frame
            response = await page.goto(f"{world.url}/console/no/such/page")
            assert response.status == 404
            assert await page.locator("h1").all_inner_texts() == ["No such page"]
            assert await page.get_by_role("link", name="Repositories").count() == 1
            assert await page.get_by_role("button", name="Sign out").count() == 1

            # the sessions page lists this browser's session
            await page.goto(f"{world.url}/console/sessions")
            assert "(this browser)" in await page.locator("main").inner_text()

            # the new pages fit a phone's width too
            await page.set_viewport_size({"width": 375, "height": 740})
            for path in ("/console/repos", f"/console/repos/{full_name}/pulls/{pr.number}", "/console/sessions",
                         "/console/deliveries/d-review"):
                await page.goto(world.url + path)
                assert await page.evaluate(NO_OVERFLOW), path
            await context.close()

            # without script the UTC value shows
            context = await browser.new_context(java_script_enabled=False, timezone_id="Asia/Tokyo")
            cookies = await _token_cookie(world.url)
            await context.add_cookies(cookies)
            page = await context.new_page()
            await page.goto(f"{world.url}/console/deliveries")
            assert (await page.locator("time").first.inner_text()).endswith(" UTC")
            await context.close()

            # a refused sign-in links back to the sign-in page
            context = await browser.new_context()
            page = await context.new_page()
            response = await page.goto(f"{world.url}/v1/webapi/oidc/callback?state=forged&code=x")
            assert response.status >= 400 and await page.locator("h1").inner_text() == "Sign-in refused"
            await page.get_by_role("link", name="back to the sign-in page").click()
            await page.wait_for_url(f"{world.url}/console/login")
            await context.close()
    finally:
        await chat.close()


async def _token_cookie(url: str) -> list[dict]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.post(url + "/console/login/token", data={"token": TOKEN}, headers={"Origin": url}) as response:
            assert response.status == 200
        return [{"name": c.key, "value": c.value, "url": url} for c in http.cookie_jar]
