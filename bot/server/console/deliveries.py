"""`/console/` and `/console/deliveries`: what the queue did, delivery by delivery.

Every list is narrowed to the accounts the viewer's roles allow (`accounts` in the admin file's
`access`): rows are read newest first and those of other accounts skipped, so a page never shows
a delivery the viewer may not see, nor a count that includes one.

A delivery's outcome is its job's state, except that a job that ran to its end with a review that
failed is shown, counted, filtered and redelivered as `failed` (bot.store.console.shown_state);
its review's outcome is shown beside it.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from aiohttp import web

from bot.server.console.access import Refused, Viewer, check_form, viewer
from bot.server.console.context import Console
from bot.server.console.render import page, see_other
from bot.server.jobs.timeline import Attempt, read_attempts
from bot.store.console import owner_of, redeliverable, shown_state

PAGE = 50
SCAN = 500  # rows read at a time while filling a page
STATES = ("received", "queued", "running", "done", "failed", "ignored", "superseded")
DAY = 24 * 3600


# What a review's reason code (bot.events.jobs.ReviewResult) means, for people.
REASONS = {
    "no-usable-answer": "no model gave a usable answer",
    "invalid-config": "the configuration at the merge base is invalid",
    "disabled": "reviews are disabled for this repository",
    "filtered": "the pull request does not pass filterExpr",
    "ignored-only": "every changed file is ignored",
    "paused": "automatic reviews of this pull request are paused",
    "no-provider": "no model provider is configured",
    "no-model": "no model is chosen",
    "incomplete": "part of the review is missing, so nothing was approved",
    "already-reviewed": "this head was reviewed before: that review's result again",
}


def shown(row: dict[str, Any]) -> dict[str, Any]:
    """The row with what the pages show of it: `shown` (its outcome) and `review` (its review's
    outcome in words, or None for a job that ran no review)."""
    outcome = row.get("review_outcome")
    reason = row.get("review_reason")
    review = None
    if outcome:
        review = f"review {outcome}" + (f": {REASONS.get(reason, reason)}" if reason else "")
    return {**row, "shown": shown_state(row), "review": review}


def visible(who: Viewer, row: dict[str, Any]) -> bool:
    """A delivery the viewer may read; one not tied to an account only with an unnarrowed grant."""
    return who.may("deliveries:read", owner_of(row))


class DeliveryPages:
    def __init__(self, console: Console) -> None:
        self.console = console

    async def _rows(self, who: Viewer, *, limit: int, before: int | None = None,
                    **filters: Any) -> tuple[list[dict[str, Any]], int | None]:
        """Up to `limit` visible rows newest first, and the cursor of the next page (None: no more)."""
        found: list[dict[str, Any]] = []
        cursor = before
        while len(found) < limit:
            batch = await self.console.store.recent(before_seq=cursor, limit=SCAN, **filters)
            for row in batch:
                if visible(who, row):
                    found.append(shown(row))
                    if len(found) == limit:
                        return found, row["seq"]
            if len(batch) < SCAN:
                return found, None
            cursor = batch[-1]["seq"]
        return found, None

    async def overview(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, "deliveries:read", some_account=True)
        except Refused as refused:
            return refused.response
        since = time.time() - DAY
        if who.principal.grant.scopes.get("deliveries:read") is None:  # every account: counted in SQL
            outcomes = Counter(await self.console.store.shown_states_since(since))
        else:  # narrowed to accounts: counted from the rows the viewer may see
            day, _ = await self._rows(who, limit=100_000, since=since)
            outcomes = Counter(row["shown"] for row in day)
        failures, _ = await self._rows(who, limit=10, since=since, state="failed")
        runtime = self.console.runtime()
        queue = runtime.queue if runtime else None
        admin = self.console.admin
        return page("overview.html", who=who, outcomes=[(s, outcomes.get(s, 0)) for s in STATES],
                    total=sum(outcomes.values()), failures=failures, depth=queue.depth() if queue else 0,
                    received=self.console.store.unclassified, running=queue.running if queue else 0,
                    admin={"path": admin.path, "loaded": admin.current is not None, "loaded_at": admin.loaded_at,
                           "errors": admin.last_errors, "error_at": admin.last_error_at},
                    show_admin=who.may("config:read"))

    async def listing(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, "deliveries:read", some_account=True)
        except Refused as refused:
            return refused.response
        filters = {name: request.query.get(name, "").strip()[:200] for name in ("repo", "event", "state")}
        before = request.query.get("before", "")
        rows, cursor = await self._rows(who, limit=PAGE, before=int(before) if before.isdigit() else None,
                                        **{k: v or None for k, v in filters.items()})
        return page("deliveries.html", who=who, rows=rows, filters=filters, cursor=cursor, states=STATES)

    async def _delivery(self, request: web.Request, permission: str) -> tuple[Viewer, dict[str, Any]]:
        """The delivery named in the path, when the viewer may see it (else 404, saying nothing more)."""
        who = await viewer(request, self.console.gate, permission, some_account=True)
        record = await self.console.store.delivery(request.match_info["delivery_id"])
        if record is None or not visible(who, record) or not who.may(permission, owner_of(record)):
            raise Refused(page("missing.html", 404, who=who, what="delivery"))
        return who, record

    async def delivery(self, request: web.Request) -> web.Response:
        try:
            who, record = await self._delivery(request, "deliveries:read")
        except Refused as refused:
            return refused.response
        record.pop("body", None)
        record.pop("headers", None)
        attempts = await read_attempts(self.console.timeline, record["delivery_id"])
        details = [c.detail for a in attempts for c in a.calls if c.detail]
        check_run = last_check_run(attempts)
        reviews = [d for d in details if "review" in d]
        return page("delivery.html", who=who, d=shown(record), attempts=attempts,
                    links=github_links(record, attempts, self.console.github_url), check_run=check_run, reviews=reviews,
                    may_redeliver=redeliverable(record) and who.may("deliveries:write", owner_of(record)))

    async def redeliver(self, request: web.Request) -> web.Response:
        try:
            who, record = await self._delivery(request, "deliveries:write")
            await check_form(request, who)
        except Refused as refused:
            return refused.response
        if not await self.console.store.redeliver(record["delivery_id"]):
            return page("missing.html", 409, who=who, what="failed delivery (it is no longer failed)")
        if self.console.audit is not None:
            await self.console.audit.record(who.principal, "delivery.redeliver", record["delivery_id"],
                                            ip=request.remote, account=owner_of(record),
                                            details={"repository": record.get("repo"), "event": record.get("event")})
        return see_other(f"/console/deliveries/{record['delivery_id']}")


def last_check_run(attempts: list[Attempt]) -> dict[str, Any] | None:
    """The last check-run write of a delivery's attempts: its conclusion, title and summary."""
    details = [c.detail for a in attempts for c in a.calls if c.detail and "checkRun" in c.detail]
    return details[-1] if details else None


def github_links(record: dict[str, Any], attempts: list[Attempt], github_url: str) -> dict[str, str]:
    """Where the delivery's things live on GitHub (`github_url`: github.com or a GitHub Enterprise
    Server's web address): the pull request, the commit, the check runs."""
    repo, links = record.get("repo"), {}
    if not repo:
        return {}
    base = f"{github_url.rstrip('/')}/{repo}"
    if record.get("pr_number"):
        links["pull request"] = f"{base}/pull/{record['pr_number']}"
    if record.get("head_sha"):
        links["commit"] = f"{base}/commit/{record['head_sha']}"
    for attempt in attempts:
        for call in attempt.calls:
            parts = call.path.rstrip("/").split("/")
            if len(parts) >= 2 and parts[-2] == "check-runs" and parts[-1].isdigit():
                links[f"check run {parts[-1]}"] = f"{base}/runs/{parts[-1]}"
    return links
