"""`/console/repos/{owner}/{repo}`: the configuration a pull request opened now would get, each
value named by the layer it came from (`instance`, `account`, `repository`, or `default`), and the
repository's last deliveries; "simulate" plans a pull request by number without posting anything
(`config:write`). It reads what the admin API reads (`GET /api/config/...`), through
the same functions, so the page and the API never disagree.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from aiohttp import web

from bot.github import GitHubError
from bot.server.api.admin import GITHUB_DEADLINE, config_report
from bot.server.api.config_reader import ConfigAtHead, NotInstalled, read_config_at_head
from bot.server.console.access import Refused, Viewer, check_form, viewer
from bot.server.console.context import Console
from bot.server.console.deliveries import last_check_run, shown, visible
from bot.server.console.render import page
from bot.server.console.simulate import simulate_plan
from bot.server.jobs.timeline import read_attempts

_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
_REPO = re.compile(r"^(?!\.\.?$)[A-Za-z0-9._-]{1,100}$")
RECENT = 20
PLANS = 10  # of the recent deliveries, those whose check run (its title and plan) is shown


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
        return await self._page(request, who, owner, name)

    async def _page(self, request: web.Request, who: Viewer, owner: str, name: str, *, number: str = "",
                    plan: dict[str, Any] | None = None, plan_problem: str | None = None,
                    status: int = 200) -> web.Response:
        at_head, problem = await self._at_head(owner, name)
        report = config_report(self.console.admin.current, at_head) if at_head else None
        recent = await self.console.store.recent(repo=f"{owner}/{name}", limit=RECENT)
        rows = [shown(row) for row in recent if visible(who, row)] if who.may("deliveries:read", owner) else []
        for row in rows[:PLANS]:
            row["check"] = last_check_run(await read_attempts(self.console.timeline, row["delivery_id"]))
        values = _fields(report["effective"], report["sources"]) if report else []
        return page("repo.html", status, who=who, full_name=f"{owner}/{name}", report=report, problem=problem,
                    github_url=self.console.github_url.rstrip("/"), values=values, rows=rows,
                    may_simulate=who.may("config:write", owner) and at_head is not None,
                    effective=json.dumps(report["effective"], indent=2, sort_keys=True) if report else "",
                    number=number, plan=json.dumps(plan, indent=2) if plan else "", plan_data=plan,
                    plan_problem=plan_problem)

    async def simulate(self, request: web.Request) -> web.Response:
        """Plans pull request `number` as a delivery would, and shows the plan; posts nothing."""
        owner, name = request.match_info["owner"], request.match_info["repo"]
        try:
            who = await viewer(request, self.console.gate, "config:write", owner)
            form = await check_form(request, who)
        except Refused as refused:
            return refused.response
        number = form.get("number")
        text = number.strip() if isinstance(number, str) else ""
        if not _OWNER.match(owner) or not _REPO.match(name):
            return page("missing.html", 400, who=who, what=f"repository (`{owner}/{name}` is not a GitHub name)")
        if not text.isdigit() or not 0 < int(text) < 2**31:
            return await self._page(request, who, owner, name, number=text[:20], status=400,
                                    plan_problem="number: a pull request number is a whole number from 1")
        at_head, problem = await self._at_head(owner, name)
        if at_head is None:
            return await self._page(request, who, owner, name, number=text, status=502, plan_problem=problem)
        runtime = self.console.runtime()
        try:
            async with asyncio.timeout(GITHUB_DEADLINE):
                plan = await simulate_plan(runtime.context.github, at_head.installation_id,
                                           self.console.admin.current, owner, name, int(text))
        except GitHubError as exc:
            why = (f"there is no pull request #{text} in {owner}/{name}" if exc.status == 404 else exc.describe())
            return await self._page(request, who, owner, name, number=text, status=404 if exc.status == 404 else 502,
                                    plan_problem=why)
        except TimeoutError:
            return await self._page(request, who, owner, name, number=text, status=502,
                                    plan_problem=f"GitHub did not answer within {GITHUB_DEADLINE:.0f} seconds")
        return await self._page(request, who, owner, name, number=text, plan=plan)

    async def _at_head(self, owner: str, name: str) -> tuple[ConfigAtHead | None, str | None]:
        runtime = self.console.runtime()
        context = runtime.context if runtime else None
        if context is None or context.github is None:
            return None, ("the server has no GitHub App credentials (GITHUB_APP_ID and GITHUB_PRIVATE_KEY), so it "
                          "cannot read repositories")
        try:
            async with asyncio.timeout(GITHUB_DEADLINE):
                return await read_config_at_head(context.github, context.store, owner, name), None
        except NotInstalled:
            return None, f"the app is not installed on {owner}/{name} (or the repository does not exist)"
        except GitHubError as exc:
            return None, exc.describe()
        except TimeoutError:
            return None, f"GitHub did not answer within {GITHUB_DEADLINE:.0f} seconds; try again later"


def _fields(effective: dict[str, Any], sources: dict[str, str]) -> list[tuple[str, str, str]]:
    """(field, value as JSON, the layer it came from) for every field the sources name."""
    rows = []
    for field, layer in sorted(sources.items()):
        value: Any = effective
        for part in field.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        rows.append((field, json.dumps(value, sort_keys=True), layer))
    return rows
