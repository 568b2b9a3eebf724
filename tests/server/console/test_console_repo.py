"""The console's repository page against the GitHub double and the real pipeline's reading
steps: the effective configuration with the layer of each value, and "simulate", which plans a
pull request by number and posts nothing."""

from __future__ import annotations

import html
import re

import aiohttp

from tests.support.app_support import running_app
from tests.support.console_support import csrf_of

TOKEN = "admin-token-for-console-tests-0123456789abcdef"
ADMIN = """\
defaults:
  feedback: minimal
  rules:
    - id: no-secrets
      rule: Never commit credentials.
accounts:
  octo-org:
    requireSuggestedFix: true
access:
  roles:
    admin: {allow: ["*"]}
  mfa:
    required: ["config:write"]
"""
CONFIG = """\
approve: true
rules:
  - id: python-style
    rule: Functions have type hints.
    paths: ["**/*.py"]
"""


def row(page: str, field: str) -> tuple[str, str]:
    found = re.search(rf"<tr><td><code>{re.escape(field)}</code></td><td><code>(.*?)</code></td>"
                      rf'<td><span class="badge layer">(.*?)</span>', page)
    assert found, field
    return html.unescape(found.group(1)), found.group(2)


async def test_the_repo_page_names_each_values_layer_and_simulates_without_posting(tmp_path, github, github_app,
                                                                                   app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=ADMIN,
                           REVIEWER_ADMIN_TOKEN=TOKEN) as world, \
            aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True), headers={"Origin": world.url}) as browser:
        pr = world.pull(base={".reviewer.yaml": CONFIG})
        async with browser.post(world.url + "/console/login/token", data={"token": TOKEN}) as response:
            assert response.status == 200
        async with browser.get(world.url + "/console/repos/octo-org/example") as response:
            page = await response.text()
        assert response.status == 200, page
        assert row(page, "approve") == ("true", "repository")
        assert row(page, "feedback") == ('"minimal"', "instance")
        assert row(page, "requireSuggestedFix") == ("true", "account")
        assert row(page, "enabled") == ("true", "default")
        assert "<code>.reviewer.yaml</code>" in page

        def writes() -> list[str]:  # to the repository (a token for the installation is no write to it)
            return [f"{c.method} {c.path}" for c in github.calls if c.method != "GET" and "/repos/" in c.path]

        calls_before = len(github.calls)
        async with browser.post(world.url + "/console/repos/octo-org/example/simulate",
                                data={"csrf": csrf_of(page), "number": str(pr.number)}) as response:
            simulated = await response.text()
        assert response.status == 200, simulated
        assert "<code>no-secrets</code>, <code>python-style</code>" in simulated
        assert world.runs(pr) == [] and writes() == []  # nothing posted: no check run, no review
        assert any(c.path.endswith(f"/pulls/{pr.number}") for c in github.calls[calls_before:])  # it was read

        async with browser.post(world.url + "/console/repos/octo-org/example/simulate",
                                data={"csrf": csrf_of(page), "number": "999"}) as response:
            assert response.status == 404 and "no pull request #999" in await response.text()
        async with browser.post(world.url + "/console/repos/octo-org/example/simulate",
                                data={"csrf": csrf_of(page), "number": "1; drop"}) as response:
            assert response.status == 400 and "number: a pull request number" in await response.text()
