"""The resource API (docs/api.md "The connector resource API"): Kubernetes-style GET, PUT and DELETE of connectors.

    /apis/resources.service.dev/v3/oidcconnectors[/NAME]
    /apis/resources.service.dev/v2/samlconnectors[/NAME]

A PUT runs both phases: a body that breaks the schema is refused (422, every error listed); a
well-formed one is stored and reconciled, and the outcome is its `status`. A SAML connector's
`entity_descriptor_url` is fetched then (bounded by its timeout, before the store's transaction),
so a broken URL shows in `status.conditions`; the good document is kept for sign-in. After that,
the server's `Reconciler` (bot/connectors/controller.py) keeps the status true as the world moves.
Every call needs the
permission (`connectors:read` to read, `connectors:write` to change), checked by the sign-in gate:
the break-glass admin token or a session. Secret values never leave: answers are redacted, and
logs name objects only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from aiohttp import web

from bot.audit.log import Audit, changed_fields
from bot.auth.destinations import Moved, may_move, moved
from bot.auth.guard import Denial, Principal
from bot.connectors.admission import envelope_problem, redacted_cause, shape_issues
from bot.connectors.conditions import SUCCESSFULLY_RECONCILED
from bot.connectors.controller import Reconciler
from bot.connectors.descriptor_fetch import DescriptorSource
from bot.connectors.field_checks import ConnectorSecrets
from bot.connectors.kinds import GROUP, KINDS, ConnectorKind, is_connector_name
from bot.connectors.resource import client_part, next_object, redact, restore_redacted
from bot.connectors.selectors import parse_selector
from bot.secrets.references import SecretStore
from bot.server.resources.status import BodyError, InvalidBody, denial_response, read_body, status_response
from bot.server.signin.gate import Gate
from bot.store.model import Conflict, ConnectorStore

log = logging.getLogger("reviewer.connectors")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class _Refused(Exception):
    """Raised inside the store's transaction to abandon a write with an answer."""

    def __init__(self, response: web.Response) -> None:
        super().__init__("refused")
        self.response = response


def setup_routes(app: web.Application, store: ConnectorStore, *, admin_token: str | None,
                 secrets_dir: str | None = None, clock: Callable[[], datetime] | None = None,
                 gate: Gate | None = None, descriptors: DescriptorSource | None = None,
                 reconciler: Reconciler | None = None, audit: Audit | None = None) -> None:
    """Adds the connector routes to `app` (the server's, beside the webhook). `gate` decides who may
    call them; without one, only the admin token (and without that, nobody: the server says so).
    `reconciler` is what a PUT is checked against (the server's, shared with sign-in and its
    background rounds); without one, the routes make their own from `secrets_dir` and
    `descriptors` (SAML metadata; without one, their own too). `audit` records each connector
    applied or deleted (bot/audit/log.py), with the names of the fields a change touched."""
    gate = gate or Gate(admin_token=admin_token)
    if reconciler is None:
        if descriptors is None:
            descriptors = DescriptorSource()
            app.on_cleanup.append(lambda _: descriptors.close())
        reconciler = Reconciler(store, ConnectorSecrets(SecretStore(secrets_dir)), descriptors)
    api = _ConnectorAPI(store, gate, reconciler, clock or _utc_now, audit)
    app.middlewares.append(_unrouted_as_status)
    for kind in KINDS:
        base = f"/apis/{GROUP}/{kind.version}/{kind.plural}"
        app.router.add_get(base, api.guard(kind, api.list, "connectors:read"))
        app.router.add_get(base + "/{name}", api.guard(kind, api.get, "connectors:read"))
        app.router.add_put(base + "/{name}", api.guard(kind, api.put, "connectors:write"))
        app.router.add_delete(base + "/{name}", api.guard(kind, api.delete, "connectors:write"))


@web.middleware
async def _unrouted_as_status(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Under /apis/, a path or method no route serves is answered as every other failure there: a
    `Status` object (kubectl and other clients read those), not aiohttp's plain text."""
    try:
        return await handler(request)
    except (web.HTTPNotFound, web.HTTPMethodNotAllowed) as exc:
        if not request.path.startswith("/apis/"):
            raise
        if isinstance(exc, web.HTTPMethodNotAllowed):
            response = status_response(405, f"the method {request.method} is not allowed on this resource; "
                                            f"allowed: {', '.join(sorted(exc.allowed_methods))}")
            response.headers["Allow"] = ",".join(sorted(exc.allowed_methods))
            return response
        return status_response(404, "the server could not find the requested resource: the resource API "
                                    f"serves /apis/{GROUP}/<version>/<kind plural>[/<name>]")


def _utc_now() -> datetime:
    return datetime.now(UTC)


class _ConnectorAPI:
    def __init__(self, store: ConnectorStore, gate: Gate, reconciler: Reconciler,
                 clock: Callable[[], datetime], audit: Audit | None = None) -> None:
        self.store = store
        self.gate = gate
        self.reconciler = reconciler
        self.clock = clock
        self.audit = audit

    def guard(self, kind: ConnectorKind, handler, permission: str) -> Handler:
        """Who calls, and with `permission`, before anything else; a refusal says nothing more."""

        async def guarded(request: web.Request) -> web.StreamResponse:
            allowed = await self.gate.check(request, permission)
            if isinstance(allowed, Denial):
                return denial_response(allowed)
            request[PRINCIPAL] = allowed
            return await handler(kind, request)

        return guarded

    async def list(self, kind: ConnectorKind, request: web.Request) -> web.Response:
        selector = parse_selector(request.query.get("labelSelector", ""))
        if isinstance(selector, str):
            return status_response(400, selector)
        items, version = await self.store.list(kind.kind)
        chosen = [redact(kind, obj) for obj in items
                  if all(r.matches(obj["metadata"].get("labels") or {}) for r in selector)]
        return web.json_response({"apiVersion": kind.api_version, "kind": kind.list_kind,
                                  "metadata": {"resourceVersion": version}, "items": chosen})

    async def get(self, kind: ConnectorKind, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        obj = await self.store.get(kind.kind, name) if is_connector_name(name) else None
        if obj is None:
            return _not_found(kind, name)
        return web.json_response(redact(kind, obj))

    async def delete(self, kind: ConnectorKind, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        obj = await self.store.delete(kind.kind, name) if is_connector_name(name) else None
        if obj is None:
            return _not_found(kind, name)
        ended = await self.gate.end_sessions(name)
        log.info("connector deleted: %s/%s (%d sessions ended)", kind.plural, name, ended)
        if self.audit is not None:
            await self.audit.record(request[PRINCIPAL], "connector.delete", f"{kind.plural}/{name}",
                                    ip=request.remote, details={"sessionsEnded": ended})
        return web.json_response(redact(kind, obj))

    async def put(self, kind: ConnectorKind, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        try:
            body = await read_body(request)
        except BodyError as error:
            return error.response
        except InvalidBody as invalid:
            return _invalid(kind, name, invalid.causes)
        refusal = _envelope_refusal(kind, name, body)
        if refusal is not None:
            return refusal
        issues = shape_issues(kind, body)  # a client's status is dropped: the server's to write
        if issues:
            causes = [{"field": i.pointer, "reason": i.code, "message": i.message} for i in issues]
            return _invalid(kind, name, causes)
        expected = body["metadata"].get("resourceVersion") or None  # "" is "unconditional", as in kubectl
        clash = await name_clash(self.store, kind, name)
        if clash is not None:
            return status_response(409, clash, reason="AlreadyExists",
                                   details={"name": name, "group": GROUP, "kind": kind.plural})
        incoming = client_part(kind, body)
        fetched = await self.reconciler.fetched(kind, incoming)
        now = self.clock().strftime("%Y-%m-%dT%H:%M:%SZ")

        before: list[dict | None] = []

        moves: list[Moved] = []

        def build(previous: dict | None) -> dict:
            moves[:] = moved(kind, incoming, previous)  # where its secrets go: before a `<redacted>` is restored
            refused = may_move(request[PRINCIPAL], self.gate.access(), time.time(), moves, name)
            if refused is not None:
                raise _Refused(denial_response(refused))
            missing = restore_redacted(kind, incoming, previous)
            if missing:
                raise _Refused(_invalid(kind, name, [redacted_cause(p) for p in missing]))
            before[:] = [previous]
            return next_object(incoming, previous, self.reconciler.checked(kind, incoming, fetched), now)

        try:
            obj, created = await self.store.put(kind.kind, name, expected, build)
        except Conflict:
            return status_response(409, f'Operation cannot be fulfilled on {kind.plural}.{GROUP} "{name}": '
                                        "the object has been modified (or does not exist); read it again and "
                                        "apply your changes to the latest version",
                                   details={"name": name, "group": GROUP, "kind": kind.plural})
        except _Refused as refused:
            return refused.response
        reconciled = next(c for c in obj["status"]["conditions"] if c["type"] == SUCCESSFULLY_RECONCILED)
        log.info("connector %s: %s/%s generation=%s reconciled=%s (%s)", "created" if created else "replaced",
                 kind.plural, name, obj["metadata"]["generation"], reconciled["status"], reconciled["reason"])
        if self.audit is not None:
            await self.audit.record(request[PRINCIPAL], "connector.apply", f"{kind.plural}/{name}",
                                    ip=request.remote, details=applied_details(kind, before[0] if before else None,
                                                                               obj, created, moves))
        return web.json_response(redact(kind, obj), status=201 if created else 200)


async def name_clash(store: ConnectorStore, kind: ConnectorKind, name: str) -> str | None:
    """Why `name` cannot be a connector of `kind`: a connector of another kind has it. Names are
    unique across kinds, because a session, the sign-in log and the audit log name a connector by
    its name alone: an OIDC and a SAML connector sharing one would share their sessions."""
    for other in KINDS:
        if other is not kind and await store.get(other.kind, name) is not None:
            return (f'a {other.kind} named "{name}" exists: connector names are unique across kinds (a session '
                    "names its connector by name alone); choose another name or delete that connector first")
    return None


# Where a route's guard leaves the caller it let in, for the handler (the audit log's actor).
PRINCIPAL = web.RequestKey("principal", Principal)


def applied_details(kind: ConnectorKind, previous: dict | None, stored: dict, created: bool,
                    moves: list[Moved] | None = None) -> dict:
    """What the audit log keeps of a connector applied: created or changed, the names of the
    fields of its client part (metadata and spec) that changed — never their values — and, for a
    field deciding where its secrets go, the hosts it named before and now."""
    def written(doc: dict) -> dict:  # the envelope (apiVersion, kind) is the kind's: never a change
        part = client_part(kind, doc)
        return {"metadata": part["metadata"], "spec": part["spec"]}
    old = written(previous) if previous is not None else None
    details = {"created": created, "fields": changed_fields(old, written(stored)),
               "generation": stored["metadata"].get("generation")}
    if moves:
        details["destinations"] = [m.to_json() for m in moves]
    return details


def _envelope_refusal(kind: ConnectorKind, name: str, body: dict) -> web.Response | None:
    """400s: a version this endpoint does not accept, or a kind or name other than the path's
    (bot/connectors/admission.py, which the console's "Apply" asks too)."""
    problem = envelope_problem(kind, name, body)
    return status_response(400, problem) if problem else None


def _invalid(kind: ConnectorKind, name: str, causes: list[dict]) -> web.Response:
    summary = "; ".join(c["message"] for c in causes)
    return status_response(422, f'{kind.kind}.{GROUP} "{name}" is invalid: {summary}', causes=causes,
                           details={"name": name, "group": GROUP, "kind": kind.plural})


def _not_found(kind: ConnectorKind, name: str) -> web.Response:
    return status_response(404, f'{kind.plural}.{GROUP} "{name}" not found',
                           details={"name": name, "group": GROUP, "kind": kind.plural})
