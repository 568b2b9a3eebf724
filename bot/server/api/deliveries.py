"""The admin API's deliveries: `POST /api/deliveries/{delivery_id}/redeliver` runs a failed
delivery again — one whose job failed, or whose job ran to its end with a review that failed (an
invalid configuration, no model answering) — as the console's Redeliver button and GitHub's own
redelivery do: the stored body is dispatched again as a new delivery.

Permission `deliveries:write` on the delivery's account (`accounts` in the admin file's `access`
narrows it); a delivery tied to no account needs a grant narrowed to none. Answers: 202
`{"deliveryId", "state": "received"}`; 401 no or wrong token; 403 a `Status` (`Forbidden`,
`MFARequired`); 404 no such delivery, or one the caller may not read (nothing more is said);
409 the delivery is not failed (nothing runs twice).
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from bot.audit.log import Audit
from bot.auth.guard import Denial
from bot.server import logging as log
from bot.server.context import ServerContext
from bot.server.resources.status import denial_response
from bot.server.signin.gate import Gate
from bot.store.console import owner_of, shown_state

logger = log.get("admin_api")
PERMISSION = "deliveries:write"


def setup_delivery_routes(app: web.Application, *, gate: Gate, context: Callable[[], ServerContext | None],
                          audit: Audit | None = None) -> None:
    api = _DeliveriesAPI(gate, context, audit)
    app.router.add_post("/api/deliveries/{delivery_id}/redeliver", api.redeliver)


def _answer(status: int, message: str) -> web.Response:
    return web.json_response({"message": message}, status=status)


class _DeliveriesAPI:
    def __init__(self, gate: Gate, context: Callable[[], ServerContext | None], audit: Audit | None) -> None:
        self.gate = gate
        self.context = context
        self.audit = audit

    async def redeliver(self, request: web.Request) -> web.Response:
        allowed = await self.gate.check(request, PERMISSION, some_account=True)
        if isinstance(allowed, Denial):
            return denial_response(allowed)
        context = self.context()
        if context is None:
            return _answer(503, "the server is starting; try again in a moment")
        delivery_id = request.match_info["delivery_id"]
        record = await context.store.delivery(delivery_id)
        owner = owner_of(record) if record is not None else None
        grant = allowed.grant
        if record is None or not (grant.allows("deliveries:read", owner) or grant.allows(PERMISSION, owner)):
            return _answer(404, f"no delivery {delivery_id!r}")
        checked = await self.gate.check(request, PERMISSION, owner)  # on the delivery's account, MFA included
        if isinstance(checked, Denial):
            return denial_response(checked)
        if not await context.store.redeliver(delivery_id):
            return _answer(409, f"delivery {delivery_id} is {shown_state(record)}: only a failed delivery (its job "
                                "or its review failed) is run again")
        logger.info("delivery redelivered through the admin API", extra={"delivery": delivery_id,
                                                                          "by": allowed.username})
        if self.audit is not None:
            await self.audit.record(checked, "delivery.redeliver", delivery_id, ip=request.remote, account=owner,
                                    details={"repository": record.get("repo"), "event": record.get("event")})
        return web.json_response({"deliveryId": delivery_id, "state": "received"}, status=202)
