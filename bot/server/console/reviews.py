"""`/console/repos` and `/console/repos/{owner}/{repo}/pulls/{number}`: what was reviewed, and how.

The repositories are those the installations cover, as the installation events recorded them
(bot/store/installs.py), each with its last review: the newest delivery whose job recorded a
review's outcome (approved, findings, failed, skipped; bot/store/model.py). A pull request's page
lists its deliveries over time with their reviews' outcomes and check runs, and the findings the
review memory keeps for it (bot/server/console/findings.py says what is known of their fate).
Both are narrowed to the accounts the viewer may read deliveries of.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.server.console.access import Refused, Viewer, viewer
from bot.server.console.context import Console
from bot.server.console.deliveries import last_check_run, shown, visible
from bot.server.console.findings import findings_of
from bot.server.console.render import page
from bot.server.jobs.timeline import read_attempts

_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_REPO = re.compile(r"(?!\.\.?\Z)[A-Za-z0-9._-]{1,100}")
_NUMBER = re.compile(r"[0-9]{1,10}")  # ASCII digits: str.isdigit takes `²`, which int() refuses
REVIEWS = 100  # deliveries of one pull request shown
CHECKED = 30  # of those, the newest whose check run is read from the timeline


@dataclass(frozen=True)
class Covered:
    full_name: str
    installation_id: int
    last: dict[str, Any] | None  # the newest reviewed delivery (shown), None: never reviewed


def covered(installations: list[dict[str, Any]], last_reviews: list[dict[str, Any]],
            allowed: Any) -> list[Covered]:
    """Each repository an installation reaches (`allowed(owner)`), by name, with its last review (pure)."""
    last = {row["repo"].lower(): row for row in last_reviews if row.get("repo")}
    seen: dict[str, Covered] = {}
    for installation in installations:
        for name in installation["repositories"]:
            if name.lower() in seen or not allowed(name.split("/", 1)[0]):
                continue
            row = last.get(name.lower())
            seen[name.lower()] = Covered(name, installation["id"], shown(row) if row else None)
    return sorted(seen.values(), key=lambda c: c.full_name.lower())


class ReviewPages:
    def __init__(self, console: Console) -> None:
        self.console = console

    async def repositories(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, "deliveries:read", some_account=True)
        except Refused as refused:
            return refused.response
        store = self.console.store
        rows = covered(await store.installations(), await store.last_reviews(),
                       lambda owner: who.may("deliveries:read", owner))
        return page("repos.html", who=who, rows=rows)

    async def pull(self, request: web.Request) -> web.Response:
        owner, name, number = (request.match_info[k] for k in ("owner", "repo", "number"))
        try:
            who = await viewer(request, self.console.gate, "deliveries:read", owner)
        except Refused as refused:
            return refused.response
        if not _OWNER.fullmatch(owner) or not _REPO.fullmatch(name) or not _NUMBER.fullmatch(number) \
                or not 0 < int(number) < 2**31:
            return page("missing.html", 404, who=who, what="pull request")
        return await self._pull(who, owner, name, int(number))

    async def _pull(self, who: Viewer, owner: str, name: str, number: int) -> web.Response:
        full_name = f"{owner}/{name}"
        rows = [shown(row) for row in await self.console.store.recent(repo=full_name, pr_number=number,
                                                                      limit=REVIEWS) if visible(who, row)]
        for row in rows[:CHECKED]:
            row["check"] = last_check_run(await read_attempts(self.console.timeline, row["delivery_id"]))
        memory = self.console.memory
        findings = await findings_of(memory, f"{full_name}#{number}") if memory is not None else []
        return page("pull.html", who=who, full_name=full_name, number=number, rows=rows, findings=findings,
                    remembered=memory is not None, github_url=self.console.github_url.rstrip("/"))
