"""`/console/repos/{owner}/{repo}`: the configuration a pull request opened now would get, each
value named by the layer it came from (`instance`, `account`, `repository`, or `default`), and the
repository's last deliveries. It reads what the admin API reads (`GET /api/config/...`), through
the same functions, so the page and the API never disagree.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from aiohttp import web

from bot.github import GitHubError
from bot.server.admin_api import GITHUB_DEADLINE, config_report
from bot.server.config_reader import NotInstalled, read_config_at_head
from bot.server.console.access import Refused, viewer
from bot.server.console.context import Console
from bot.server.console.deliveries import visible
from bot.server.console.render import page

_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
_REPO = re.compile(r"^(?!\.\.?$)[A-Za-z0-9._-]{1,100}$")
RECENT = 20


class RepoPages:
    def __init__(self, console: Console) -> None:
        self.console = console

    async def repo(self, request: web.Request) -> web.Response:
        owner, name = request.match_info["owner"], request.match_info["repo"]
        try:
            who = await viewer(request, self.console.gate, "config:read", owner)
        except Refused as refused:
            return refused.response
        if not _OWNER.match(owner) or not _REPO.match(name):
            return page("missing.html", 400, who=who, what=f"repository (`{owner}/{name}` is not a GitHub name)")
        report, problem = await self._report(owner, name)
        recent = await self.console.store.recent(repo=f"{owner}/{name}", limit=RECENT)
        rows = [row for row in recent if visible(who, row)] if who.may("deliveries:read", owner) else []
        values = _fields(report["effective"], report["sources"]) if report else []
        return page("repo.html", who=who, full_name=f"{owner}/{name}", report=report, problem=problem,
                    values=values, rows=rows,
                    effective=json.dumps(report["effective"], indent=2, sort_keys=True) if report else "")

    async def _report(self, owner: str, name: str) -> tuple[dict[str, Any] | None, str | None]:
        runtime = self.console.runtime()
        context = runtime.context if runtime else None
        if context is None or context.github is None:
            return None, ("the server has no GitHub App credentials (GITHUB_APP_ID and GITHUB_PRIVATE_KEY), so it "
                          "cannot read repositories")
        try:
            async with asyncio.timeout(GITHUB_DEADLINE):
                at_head = await read_config_at_head(context.github, context.store, owner, name)
        except NotInstalled:
            return None, f"the app is not installed on {owner}/{name} (or the repository does not exist)"
        except GitHubError as exc:
            return None, exc.describe()
        except TimeoutError:
            return None, f"GitHub did not answer within {GITHUB_DEADLINE:.0f} seconds; try again later"
        return config_report(self.console.admin.current, at_head), None


def _fields(effective: dict[str, Any], sources: dict[str, str]) -> list[tuple[str, str, str]]:
    """(field, value as JSON, the layer it came from) for every field the sources name."""
    rows = []
    for field, layer in sorted(sources.items()):
        value: Any = effective
        for part in field.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        rows.append((field, json.dumps(value, sort_keys=True), layer))
    return rows
