"""Renders the console with sample data in headless Chromium and saves PNGs (docs/console.png,
and beside it -delivery and -repos: a failed delivery's page and the repositories page).

    .venv/bin/python -m scripts.console_screenshot [docs/console.png]

The browser tests run the same `capture` (into a temporary directory), so the README's picture is
made by code that is tested. The sample data is made through the server's own interfaces: signed
webhook deliveries (an installation; jobs whose reviews approve, find, skip, and one that
fails) and the break-glass sign-in.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from bot.events.jobs import ReviewResult
from tests.support.browser_support import chromium
from tests.support.console_support import console_server, failed_delivery
from tests.support.oidc_support import ADMIN_TOKEN
from tests.support.server_support import Recorder, example, pr_payload


async def sign_in_with_token(page: Any, url: str, next_path: str = "/console/") -> None:
    await page.goto(f"{url}{next_path}")
    await page.fill("#token", ADMIN_TOKEN)
    await page.click("text=Sign in with the token")
    await page.wait_for_url(f"{url}{next_path}")


def installed(repos: list[str]) -> dict:
    """GitHub's `installation.created` example, on `repos`."""
    payload = example("installation.created")
    payload["repositories"] = [{"id": 1000 + n, "name": name.split("/")[1], "full_name": name, "private": False}
                               for n, name in enumerate(repos)]
    return payload


async def sample(server: Any, recorder: Recorder) -> str:
    """Deliveries of several outcomes; returns the id of the failed one."""
    status, _ = await server.post("installation", installed(["acme/app", "acme/docs", "acme/web", "acme/api"]),
                                  "install-1")
    assert status == 202
    await server.wait_state("install-1", "done")
    outcomes = [ReviewResult("findings"), ReviewResult("approved"), ReviewResult("skipped", "filtered")]
    for n, outcome in enumerate(outcomes):
        recorder.reviews[f"ok-{n}"] = outcome
    recorder.reviews["api-0"] = ReviewResult("approved")
    status, _ = await server.post("pull_request", pr_payload(4, "d" * 40, repo="acme/api"), "api-0")
    assert status == 202
    await server.wait_state("api-0", "done")
    for n in range(3):
        status, _ = await server.post("pull_request", pr_payload(10 + n, f"{n}" * 40, repo="acme/web"), f"ok-{n}")
        assert status == 202
        await server.wait_state(f"ok-{n}", "done")
    await failed_delivery(server, recorder, "7c1a9e20-sample", repo="acme/app",
                          why="GitHub POST /repos/{owner}/{repo}/check-runs answered 403: Resource not accessible "
                              "by integration (the app lacks checks: write)")
    return "7c1a9e20-sample"


async def capture(workdir: Path, out: Path, *, width: int = 1100, height: int = 760) -> list[Path]:
    """The overview, a failed delivery's page and the repositories, as `out`, `out`-delivery and
    `out`-repos; returns the files."""
    recorder = Recorder()
    async with console_server(workdir, recorder) as server, chromium() as browser:
        failed = await sample(server, recorder)
        context = await browser.new_context(viewport={"width": width, "height": height})
        page = await context.new_page()
        await sign_in_with_token(page, server.url)
        await page.screenshot(path=str(out), full_page=False)
        second = out.with_name(out.stem + "-delivery" + out.suffix)
        await page.goto(f"{server.url}/console/deliveries/{failed}")
        await page.screenshot(path=str(second), full_page=False)
        third = out.with_name(out.stem + "-repos" + out.suffix)
        await page.goto(f"{server.url}/console/repos")
        await page.screenshot(path=str(third), full_page=False)
        await context.close()
    return [out, second, third]


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/console.png").resolve()
    with tempfile.TemporaryDirectory() as workdir:
        files = asyncio.run(capture(Path(workdir), out))
    print("\n".join(str(f) for f in files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
