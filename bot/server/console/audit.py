"""`/console/audit`: the audit log (bot/audit/log.py), newest first, with the filters of `GET /v1/audit`
(actor, action, since, until) and **Older entries** to page on. A viewer whose `audit:read` is
narrowed to accounts sees the entries of those accounts only; a filter that cannot be used is
shown as an error naming it (400), as the API names it."""

from __future__ import annotations

from urllib.parse import urlencode

from aiohttp import web

from bot.audit.log import ACTIONS, DEFAULT_LIMIT, PERMISSION, QueryError, parse_query, visible_entries
from bot.server.console.access import Refused, viewer
from bot.server.console.context import Console
from bot.server.console.render import page

FILTERS = ("actor", "action", "since", "until")


class AuditPages:
    def __init__(self, console: Console) -> None:
        self.console = console

    async def listing(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, PERMISSION, some_account=True)
        except Refused as refused:
            return refused.response
        given = {k: request.query.get(k, "") for k in FILTERS}
        try:
            query = parse_query(request.query)
        except QueryError as error:
            return page("audit.html", 400, who=who, filters=given, actions=ACTIONS, entries=[], older=None,
                        error=str(error), error_field=error.field)
        entries, next_before = ([], None) if self.console.audit is None else \
            await visible_entries(self.console.audit.store, query, who.principal.grant)
        older = None
        if next_before is not None:
            kept = {k: v for k, v in given.items() if v}
            if query.limit != DEFAULT_LIMIT:
                kept["limit"] = str(query.limit)
            older = "/console/audit?" + urlencode({**kept, "before": next_before})
        return page("audit.html", who=who, filters=given, actions=ACTIONS, entries=entries, older=older,
                    error="", error_field="")
