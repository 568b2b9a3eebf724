"""`GET /v1/audit`: the audit log (bot/audit/log.py), newest first, for a caller with `audit:read`.

Filters, each optional: `actor` (a username, or `break-glass token`, or `server`), `action` (one of
bot.audit.log.ACTIONS), `since` and `until` (ISO 8601; `until` excluded), `limit` (1 to 500, default
100), `before` (the `nextBefore` of the page before: the next page). A grant narrowed to accounts
sees the entries of its accounts only, never the instance-wide ones (connectors, the admin file).
Answers: 200 `{"entries": [...], "nextBefore": int | null}`; 400 `{"message", "field"}` naming the
filter that is wrong; 401 no or wrong token; 403 a `Status` (`Forbidden`, `MFARequired`).
"""

from __future__ import annotations

from aiohttp import web

from bot.audit.log import PERMISSION, Audit, QueryError, entry_json, parse_query, visible_entries
from bot.auth.guard import Denial
from bot.server.resources.status import denial_response
from bot.server.signin.gate import Gate

AUDIT = web.AppKey("audit", Audit)


def setup_audit_routes(app: web.Application, *, gate: Gate, audit: Audit) -> None:
    async def listing(request: web.Request) -> web.Response:
        allowed = await gate.check(request, PERMISSION, some_account=True)
        if isinstance(allowed, Denial):
            return denial_response(allowed)
        try:
            query = parse_query(request.query)
        except QueryError as error:
            return web.json_response({"message": str(error), "field": error.field}, status=400,
                                     headers={"Cache-Control": "no-store"})
        entries, next_before = await visible_entries(audit.store, query, allowed.grant)
        return web.json_response({"entries": [entry_json(e) for e in entries], "nextBefore": next_before},
                                 headers={"Cache-Control": "no-store"})

    app.router.add_get("/v1/audit", listing)
