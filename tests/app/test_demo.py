"""`make run` is the README's first command, `make demo` the quickstart's: both must keep working.

`make demo` is run as the Makefile runs it (`python -m tests.support.demo --keep-running`): its
`Console: URL` line is opened in Chromium, which lands signed in on the console, and the pages it
names have the world in them — the repositories, a pull request's review, the failed delivery,
the learning. The link is spent by then; Ctrl-C stops the demo cleanly. The browser part skips,
saying why, without Chromium (REVIEWER_TEST_REQUIRE_BROWSER=1 fails instead)."""

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.browser_support import browser_missing, chromium
from tests.support.demo_console import BUSY_MODEL, LEARNING

pytestmark = pytest.mark.slow  # the demo as a process of its own, serving the app: `make test-fast` leaves it out

ROOT = Path(__file__).resolve().parent.parent.parent
MISSING = browser_missing()


def test_the_demo_serves_the_app_and_prints_the_check_run_it_posted():
    result = subprocess.run([sys.executable, "-m", "tests.support.demo"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the app answered 202" in result.stdout
    assert "Check run “Reviewer”" in result.stdout and "completed, conclusion success" in result.stdout
    assert "`money-as-integers` (repository)" in result.stdout
    assert "Review by reviewer[bot]: APPROVED" in result.stdout
    assert "demo-key" not in result.stdout + result.stderr
    assert "Console:" not in result.stdout  # `make run` stops after its review


async def _console_line(proc: asyncio.subprocess.Process, seen: list[str]) -> str:
    assert proc.stdout is not None
    while line := (await proc.stdout.readline()).decode():
        seen.append(line)
        if line.startswith("Console: "):
            return line.removeprefix("Console: ").strip()
    raise AssertionError("the demo ended without a Console line:\n" + "".join(seen))


@pytest.mark.skipif(MISSING is not None and os.environ.get("REVIEWER_TEST_REQUIRE_BROWSER") != "1",
                    reason=MISSING or "")
async def test_make_demo_prints_a_link_that_lands_signed_in_on_a_console_with_content():
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "tests.support.demo", "--keep-running",
                                                cwd=ROOT, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    seen: list[str] = []
    try:
        link = await asyncio.wait_for(_console_line(proc, seen), 240)
        base = link.split("/console/", 1)[0]
        assert base.startswith("http://127.0.0.1:")  # the demo's server is on loopback only
        async with chromium() as browser:
            context = await browser.new_context()
            page = await context.new_page()
            await page.goto(link)
            assert page.url == f"{base}/console/"  # signed in, on the overview
            assert "Deliveries" in await page.inner_text("main")

            await page.goto(f"{base}/console/repos")
            repos = await page.inner_text("main")
            assert "example-org/shop" in repos and "example-org/payments" in repos

            await page.goto(f"{base}/console/repos/example-org/shop/pulls/1")
            pull = await page.inner_text("main")
            assert "Say in the signature that `discount` is in cents." in pull or \
                "Say in the signature that discount is in cents." in pull

            await page.goto(f"{base}/console/deliveries?repo=example-org/payments")
            deliveries = await page.inner_text("main")
            assert "failed" in deliveries.lower(), deliveries
            await page.locator("tbody tr", has_text="pull_request.opened").locator("a[href^='/console/deliveries/']").click()
            delivery = await page.inner_text("main")
            assert BUSY_MODEL in delivery and "503" in delivery
            assert await page.locator("button", has_text="Redeliver").count() == 1

            await page.goto(f"{base}/console/learnings")
            assert LEARNING in await page.inner_text("main")

            stranger = await browser.new_context()  # the same link again, in another browser: spent
            other = await stranger.new_page()
            response = await other.goto(link)
            assert response is not None and response.status == 403
            await other.goto(f"{base}/console/")
            assert other.url.startswith(f"{base}/console/login")
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)  # Ctrl-C
        rest, _ = await asyncio.wait_for(proc.communicate(), 60)
    seen.append(rest.decode())
    output = "".join(seen)
    assert proc.returncode == 0, output
    assert "Traceback" not in output and "demo-key" not in output
