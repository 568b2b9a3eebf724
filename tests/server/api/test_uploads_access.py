"""Who may upload SARIF (`analyses:write`, bot/server/api/uploads.py), over real HTTP: a grant narrowed
to accounts reaches only their repositories, a role without the permission none, and the check
comes before anything of the body is read or kept."""

from __future__ import annotations

import aiohttp

from tests.support.analyzers_support import SHA, encode, log
from tests.support.console_support import console_server, session_for
from tests.support.oidc_support import ADMIN_TOKEN

ACCESS = """\
access:
  roles:
    admin:   {allow: ["*"]}
    ci:      {allow: ["analyses:write"], accounts: ["acme*"]}
    auditor: {allow: ["deliveries:read", "config:read"]}
"""
BODY = {"commit_sha": SHA, "ref": "refs/heads/main", "sarif": encode(log())}


async def _upload(http: aiohttp.ClientSession, url: str, repo: str, headers: dict | None = None) -> tuple[int, dict]:
    async with http.post(f"{url}/v1/repos/{repo}/code-scanning/sarifs", json=BODY, headers=headers or {}) as response:
        return response.status, await response.json()


async def test_analyses_write_is_checked_per_account_before_the_body(tmp_path):
    async with console_server(tmp_path, admin_yaml=ACCESS) as server:
        ci = await session_for(server, ["ci"])
        auditor = await session_for(server, ["auditor"])
        try:
            status, answer = await _upload(ci, server.url, "other/app")
            assert status == 403 and answer["reason"] == "Forbidden"
            status, answer = await _upload(auditor, server.url, "acme/app")
            assert status == 403
            # Allowed on acme*: past the check, refused only because the app is not installed there.
            status, answer = await _upload(ci, server.url, "acme-corp/app")
            assert status == 404 and "not installed on acme-corp/app" in answer["message"]
            async with ci.get(f"{server.url}/v1/repos/other/app/code-scanning/sarifs/{'0' * 32}") as response:
                assert response.status == 403
        finally:
            await ci.close()
            await auditor.close()
        async with aiohttp.ClientSession() as http:
            assert (await _upload(http, server.url, "acme/app"))[0] == 401
            assert (await _upload(http, server.url, "acme/app", {"Authorization": "Bearer nope"}))[0] == 401
            status, answer = await _upload(http, server.url, "-bad/app", {"Authorization": f"Bearer {ADMIN_TOKEN}"})
            assert status == 400 and "not a GitHub repository name" in answer["message"]
            status, answer = await _upload(http, server.url, "acme/app", {"Authorization": f"Bearer {ADMIN_TOKEN}"})
            assert status == 404  # the admin token has every permission; the repository is unknown


async def test_a_name_ending_in_a_newline_is_no_repository_name(tmp_path):
    """GitHub's names end with a letter, digit, `-`, `_` or `.`: an owner or repository name ending
    in a newline (`%0A`) is refused as a name (400), before any store or GitHub is asked of it."""
    async with console_server(tmp_path, admin_yaml=ACCESS) as server, aiohttp.ClientSession() as http:
        for repo in ("acme%0A/app", "acme/app%0A"):
            status, answer = await _upload(http, server.url, repo, {"Authorization": f"Bearer {ADMIN_TOKEN}"})
            assert status == 400 and "not a GitHub repository name" in answer["message"], (repo, answer)
