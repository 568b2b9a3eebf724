"""`/console/learnings`: what teams told the reviewer, and how much of what it said was useful
(docs/reviews.md "Learnings").

    GET  /console/learnings                      list, the resolution rate chart, most dismissed (learnings:read)
    POST /console/learnings/{id}/edit            change the text and paths (learnings:write on its account)
    POST /console/learnings/{id}/delete          (learnings:write on its account)

Each learning and each repository's figures are shown only where the viewer's grant allows
`learnings:read` on its account; a learning of an account the viewer may not read is not found.
Forms carry the console's CSRF token, as every console form does. An edit is checked by the API's
own rules (`bot.learnings.body`), and its problems are shown on the page.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from aiohttp import web

from bot.audit.log import Audit
from bot.learnings.body import patched_learning
from bot.learnings.book import LearningBook
from bot.learnings.chart import Series, rate_chart
from bot.learnings.model import Learning
from bot.learnings.tally import Record, count_states, most_dismissed, rates
from bot.server.console.access import Refused, Viewer, check_form, viewer
from bot.server.console.render import page, see_other
from bot.server.signin.gate import Gate

READ, WRITE = "learnings:read", "learnings:write"
WEEKS = 12
MAX_SERIES = 6


def setup_learnings_console(app: web.Application, *, gate: Gate, store: LearningBook,
                            audit: Audit | None = None) -> None:
    pages = LearningPages(gate, store, audit)
    app.router.add_get("/console/learnings", pages.listing)
    app.router.add_post("/console/learnings/{id}/edit", pages.edit)
    app.router.add_post("/console/learnings/{id}/delete", pages.delete)


class LearningPages:
    def __init__(self, gate: Gate, store: LearningBook, audit: Audit | None = None) -> None:
        self.gate, self.store, self.audit = gate, store, audit

    async def _record(self, request: web.Request, who: Viewer, action: str, learning: Learning) -> None:
        if self.audit is not None:
            await self.audit.record(who.principal, action, f"learnings/{learning.id}", ip=request.remote,
                                    account=learning.scope.account, details={"kind": learning.kind})

    async def listing(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.gate, READ, some_account=True)
        except Refused as refused:
            return refused.response
        return await self._page(who)

    async def _page(self, who: Viewer, status: int = 200, problems: dict[str, list[str]] | None = None,
                    drafts: dict[str, dict[str, str]] | None = None) -> web.Response:
        learnings = [x for x in await self.store.learnings() if who.may(READ, x.scope.account)]
        since = (datetime.now(UTC) - timedelta(weeks=WEEKS)).timestamp()
        records = [r for r in await self.store.records(since=since) if who.may(READ, r.account)]
        return page("learnings.html", status, who=who, learnings=learnings, problems=problems or {},
                    drafts=drafts or {}, may_write=lambda x: who.may(WRITE, x.scope.account),
                    by_repository=_chart(records, lambda r: f"{r.account}/{r.repository}", "by repository"),
                    by_account=_chart(records, lambda r: r.account, "by account"),
                    counts=count_states(records), dismissed=most_dismissed(records), weeks=WEEKS)

    async def _writable(self, request: web.Request) -> tuple[Viewer, Learning]:
        who = await viewer(request, self.gate, WRITE, some_account=True)
        learning = await self.store.get(request.match_info["id"])
        if learning is None or not who.may(READ, learning.scope.account) and not who.may(WRITE, learning.scope.account):
            raise Refused(page("missing.html", 404, who=who, what="learning"))
        if not who.may(WRITE, learning.scope.account):
            raise Refused(page("denied.html", 403, who=who,
                               message=f"{who.name} lacks the permission {WRITE} on account {learning.scope.account}",
                               mfa=None))
        await check_form(request, who)
        return who, learning

    async def edit(self, request: web.Request) -> web.Response:
        try:
            who, learning = await self._writable(request)
        except Refused as refused:
            return refused.response
        form = await request.post()
        text = str(form.get("text") or "")
        paths = [line.strip() for line in str(form.get("paths") or "").splitlines() if line.strip()]
        changed, issues = patched_learning(learning, {"text": text, "scope": {"paths": paths}})
        if changed is None:
            shown = {learning.id: [f"{issue.pointer or '(the learning)'}: {issue.message}" for issue in issues]}
            return await self._page(who, 422, shown, {learning.id: {"text": text, "paths": "\n".join(paths)}})
        if await self.store.replace(changed):
            await self._record(request, who, "learning.change", changed)
        return see_other(f"/console/learnings#{learning.id}")

    async def delete(self, request: web.Request) -> web.Response:
        try:
            who, learning = await self._writable(request)
        except Refused as refused:
            return refused.response
        if await self.store.delete(learning.id) is not None:
            await self._record(request, who, "learning.delete", learning)
        return see_other("/console/learnings")


def _chart(records: list[Record], key: Callable[[Record], str], title: str) -> str:
    """The weekly resolution rate of the busiest series (at most MAX_SERIES), as SVG."""
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(key(record), []).append(record)
    if not groups:
        return ""
    start = min(r.posted_at for r in records).date()
    end = datetime.fromtimestamp(time.time(), UTC).date()
    busiest = sorted(groups, key=lambda name: (-len(groups[name]), name))[:MAX_SERIES]
    series = [Series(name, tuple(rates(groups[name], "week", since=start, until=end))) for name in busiest]
    return rate_chart(series, f"Resolution rate per week, {title}")
