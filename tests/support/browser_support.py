"""Headless Chromium for the console's browser tests and the README's screenshot, driven by
Playwright for Python at Debian's `chromium` (never `playwright install`: no download).

`browser_missing()` says why the browser tests cannot run here (they skip saying so), unless
`REVIEWER_TEST_REQUIRE_BROWSER=1` (CI) makes that a failure.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

CHROMIUM = os.environ.get("REVIEWER_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def browser_missing() -> str | None:
    """Why no browser test can run (None: they can)."""
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium chromium-driver)"
    # Found, not imported: the browser test modules ask at collection, in every xdist worker, and
    # importing Playwright costs each 0.15 CPU-s.
    if importlib.util.find_spec("playwright.async_api") is None:
        return "Playwright for Python is not installed (pip install playwright)"
    return None


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """One headless Chromium (Playwright gives it a fresh temporary profile); yields its Browser,
    whose `new_context()` is one user's cookie jar."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            await browser.close()
