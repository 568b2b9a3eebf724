"""The learnings API (docs/api.md "Learnings"): what teams told the reviewer, listed and managed.

    GET    /v1/learnings[?account=&repository=&kind=]   learnings:read (each shown where it is allowed)
    POST   /v1/learnings                                learnings:write on the learning's account
    GET    /v1/learnings/{id}                           learnings:read on its account
    PATCH  /v1/learnings/{id}                           learnings:write on its account
    DELETE /v1/learnings/{id}                           learnings:write on its account

Bodies are JSON, at most 64 KiB, checked field by field by `bot.learnings.body`: a 422 `Status`
lists every problem with its JSON pointer. Permissions come from the sign-in gate (a session, or
the break-glass token) and may be narrowed to accounts in the admin file's `access`: a learning of
an account the caller may not read is answered 404, as if it did not exist. The author of a learning
added here is the caller (`source.author`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from aiohttp import web

from bot.audit.log import Audit
from bot.auth.guard import Denial, Principal
from bot.documents.bounded_read import read_at_most
from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.learnings.body import causes, new_learning, patched_learning
from bot.learnings.book import LearningBook
from bot.learnings.model import KINDS, Learning, new_id
from bot.server import logging as log
from bot.server.resources.status import denial_response, status_response
from bot.server.signin.gate import Gate

logger = log.get("learnings")
MAX_BODY = 64 * 1024
READ, WRITE = "learnings:read", "learnings:write"
_FILTERS = ("account", "repository", "kind")


def setup_learnings_routes(app: web.Application, *, gate: Gate, store: LearningBook,
                           clock: Callable[[], datetime] | None = None, audit: Audit | None = None) -> None:
    """The /v1/learnings routes; what they add, change and delete is recorded in `audit`."""
    api = _LearningsAPI(gate, store, clock or (lambda: datetime.now(UTC)), audit)
    app.router.add_get("/v1/learnings", api.list)
    app.router.add_post("/v1/learnings", api.create)
    app.router.add_get("/v1/learnings/{id}", api.get)
    app.router.add_patch("/v1/learnings/{id}", api.patch)
    app.router.add_delete("/v1/learnings/{id}", api.delete)


class _BadBody(Exception):
    def __init__(self, response: web.Response) -> None:
        super().__init__("bad body")
        self.response = response


async def _json_body(request: web.Request) -> object:
    if request.content_type != "application/json":
        raise _BadBody(status_response(415, f"unsupported media type {request.content_type!r}; send "
                                            "application/json"))
    too_large = _BadBody(status_response(413, f"the body is larger than {MAX_BODY} bytes"))
    if (request.content_length or 0) > MAX_BODY:
        raise too_large
    raw = await read_at_most(request.content, MAX_BODY)
    if len(raw) > MAX_BODY:
        raise too_large
    try:
        return parse_json(raw)
    except JsonBodyError as error:
        if error.code == "syntax":
            raise _BadBody(status_response(400, error.message)) from None
        raise _BadBody(status_response(422, "the body is invalid", causes=[
            {"field": error.pointer, "reason": error.code, "message": error.message}])) from None


def _not_found(learning_id: str) -> web.Response:
    return status_response(404, f"no learning {learning_id}")


class _LearningsAPI:
    def __init__(self, gate: Gate, store: LearningBook, clock: Callable[[], datetime], audit: Audit | None) -> None:
        self.gate, self.store, self.clock, self.audit = gate, store, clock, audit

    async def _record(self, request: web.Request, who: Principal, action: str, learning: Learning) -> None:
        if self.audit is not None:
            await self.audit.record(who, action, f"learnings/{learning.id}", ip=request.remote,
                                    account=learning.scope.account, details={"kind": learning.kind})

    async def list(self, request: web.Request) -> web.Response:
        query = request.query
        unknown = sorted(set(query) - set(_FILTERS))
        if unknown:
            return status_response(400, f"unknown query parameter {unknown[0]!r}; filter with "
                                        f"{', '.join(_FILTERS)}")
        if "repository" in query and "account" not in query:
            return status_response(400, "the query parameter `repository` needs `account` (the repository's owner)")
        if query.get("kind") not in (None, *KINDS):
            return status_response(400, f"the query parameter `kind` must be one of {', '.join(KINDS)}; "
                                        f"got {query['kind']!r}")
        account = query.get("account")
        allowed = await self.gate.check(request, READ, account, some_account=account is None)
        if isinstance(allowed, Denial):
            return denial_response(allowed)
        found = await self.store.learnings(account=account, repository=query.get("repository"), kind=query.get("kind"))
        items = [x.to_json() for x in found if allowed.grant.allows(READ, x.scope.account)]
        return web.json_response({"items": items})

    async def create(self, request: web.Request) -> web.Response:
        allowed = await self.gate.check(request, WRITE, some_account=True)
        if isinstance(allowed, Denial):
            return denial_response(allowed)
        try:
            body = await _json_body(request)
        except _BadBody as bad:
            return bad.response
        learning, issues = new_learning(body, id=new_id(), created=self.clock(), author=allowed.username)
        if learning is None:
            return status_response(422, "the learning is invalid", causes=causes(issues))
        checked = await self.gate.check(request, WRITE, learning.scope.account)
        if isinstance(checked, Denial):
            return denial_response(checked)
        await self.store.add(learning)
        logger.info("learning added through the API", extra={"learning": learning.id, "by": allowed.username})
        await self._record(request, checked, "learning.add", learning)
        return web.json_response(learning.to_json(), status=201,
                                 headers={"Location": f"/v1/learnings/{learning.id}"})

    async def _one(self, request: web.Request, permission: str) -> tuple[Principal, Learning] | web.Response:
        """The caller and the learning, when the caller holds `permission` on its account; a
        learning the caller may not read is not found."""
        allowed = await self.gate.check(request, permission, some_account=True)
        if isinstance(allowed, Denial):
            return denial_response(allowed)
        learning_id = request.match_info["id"]
        learning = await self.store.get(learning_id)
        account = learning.scope.account if learning is not None else None
        if learning is None or not (allowed.grant.allows(READ, account) or allowed.grant.allows(permission, account)):
            return _not_found(learning_id)
        checked = await self.gate.check(request, permission, account)
        if isinstance(checked, Denial):
            return denial_response(checked)
        return checked, learning

    async def get(self, request: web.Request) -> web.Response:
        found = await self._one(request, READ)
        if isinstance(found, web.Response):
            return found
        return web.json_response(found[1].to_json())

    async def patch(self, request: web.Request) -> web.Response:
        found = await self._one(request, WRITE)
        if isinstance(found, web.Response):
            return found
        who, learning = found
        try:
            body = await _json_body(request)
        except _BadBody as bad:
            return bad.response
        changed, issues = patched_learning(learning, body)
        if changed is None:
            return status_response(422, "the change is invalid", causes=causes(issues))
        if not await self.store.replace(changed):
            return _not_found(learning.id)
        logger.info("learning changed through the API", extra={"learning": learning.id, "by": who.username})
        await self._record(request, who, "learning.change", changed)
        return web.json_response(changed.to_json())

    async def delete(self, request: web.Request) -> web.Response:
        found = await self._one(request, WRITE)
        if isinstance(found, web.Response):
            return found
        who, learning = found
        deleted = await self.store.delete(learning.id)
        if deleted is None:
            return _not_found(learning.id)
        logger.info("learning deleted through the API", extra={"learning": learning.id, "by": who.username})
        await self._record(request, who, "learning.delete", deleted)
        return web.json_response(deleted.to_json())
