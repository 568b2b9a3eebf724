"""Renders the console with sample data in headless Chromium and saves PNGs (docs/console.png).

    .venv/bin/python -m scripts.console_screenshot [docs/console.png]

The browser tests run the same `capture` (into a temporary directory), so the README's picture is
made by code that is tested. The sample data is made through the server's own interfaces: signed
webhook deliveries (one job fails, one succeeds) and the break-glass sign-in.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.browser_support import chromium
from tests.console_support import console_server, failed_delivery
from tests.oidc_support import ADMIN_TOKEN
from tests.server_support import Recorder, pr_payload


async def sign_in_with_token(page: Any, url: str, next_path: str = "/console/") -> None:
    await page.goto(f"{url}{next_path}")
    await page.fill("#token", ADMIN_TOKEN)
    await page.click("text=Sign in with the token")
    await page.wait_for_url(f"{url}{next_path}")


async def sample(server: Any, recorder: Recorder) -> str:
    """Deliveries of several outcomes; returns the id of the failed one."""
    for n in range(3):
        status, _ = await server.post("pull_request", pr_payload(10 + n, f"{n}" * 40, repo="acme/web"), f"ok-{n}")
        assert status == 202
        await server.wait_state(f"ok-{n}", "done")
    await failed_delivery(server, recorder, "7c1a9e20-sample", repo="acme/app",
                          why="GitHub POST /repos/{owner}/{repo}/check-runs answered 403: Resource not accessible "
                              "by integration (the app lacks checks: write)")
    return "7c1a9e20-sample"


async def capture(workdir: Path, out: Path, *, width: int = 1100, height: int = 760) -> list[Path]:
    """The overview and a failed delivery's page, as `out` and `out`-delivery; returns the files."""
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
        await context.close()
    return [out, second]


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/console.png").resolve()
    with tempfile.TemporaryDirectory() as workdir:
        files = asyncio.run(capture(Path(workdir), out))
    print("\n".join(str(f) for f in files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
