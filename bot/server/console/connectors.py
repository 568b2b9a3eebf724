"""`/console/connectors`: each connector with its conditions and generation; its YAML (secrets
redacted) to edit and apply, with every error shown at its line.

Applying runs what the resource API's PUT runs, in the same order: the file is validated as
`reviewer validate` does (both phases, with positions), and only a valid one is stored and
reconciled; a literal secret left as `<redacted>` keeps the stored value. Literal secrets never
reach a page: the YAML shown is the redacted object. "Test sign-in" runs the connector's flow
(`/v1/webapi/oidc/test/web` or `/v1/webapi/saml/test/web`) and shows, once, the claims (OIDC) or
attributes (SAML) received and the roles they map to; no session is made.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from ruamel.yaml import YAML

from bot.auth.connectors import is_ready
from bot.auth.http import take_test_result
from bot.connectors.api import applied_details
from bot.connectors.kinds import KINDS, OIDC, SAML, ConnectorKind, by_kind
from bot.connectors.resource import RedactedRefusal, client_part, next_object, redact, restore_redacted
from bot.connectors.validate import validate_connector_text
from bot.diagnostics import Diagnostic
from bot.server.console.access import Refused, Viewer, check_form, viewer
from bot.server.console.context import Console
from bot.server.console.render import page, see_other
from bot.store.model import Conflict
from bot.yamldoc import MAX_BYTES, load_yaml_stream


def to_yaml(kind: ConnectorKind, obj: dict[str, Any]) -> str:
    """The object as an operator edits it: the client part, redacted, with its resourceVersion."""
    shown = client_part(kind, redact(kind, obj))
    version = (obj.get("metadata") or {}).get("resourceVersion")
    if version:
        shown["metadata"]["resourceVersion"] = version
    out = io.StringIO()
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.dump(shown, out)
    return out.getvalue()


class ConnectorPages:
    def __init__(self, console: Console) -> None:
        self.console = console

    async def listing(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, "connectors:read")
        except Refused as refused:
            return refused.response
        rows: list[tuple[ConnectorKind, dict[str, Any]]] = []
        for kind in KINDS:
            items, _ = await self.console.connectors.list(kind.kind)
            rows.extend((kind, obj) for obj in items)
        return page("connectors.html", who=who, rows=rows)

    async def one(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, "connectors:read")
        except Refused as refused:
            return refused.response
        kind = next((k for k in KINDS if k.plural == request.match_info["plural"]), None)
        obj = await self.console.connectors.get(kind.kind, request.match_info["name"]) if kind \
            else None
        if kind is None or obj is None:
            return page("missing.html", 404, who=who, what="connector")
        tested = None
        if who.may("connectors:write") and request.query.get("test"):
            tested = await take_test_result(self.console.signins, _PROTOCOL[kind.kind], obj["metadata"]["name"],
                                            request.query["test"])
        return self._editor(who, kind, obj, to_yaml(kind, obj), [], tested=tested,
                            test_url=_test_url(kind, obj) if who.may("connectors:write") else None)

    def _editor(self, who: Viewer, kind: ConnectorKind | None, obj: dict[str, Any] | None, text: str,
                errors: list[Diagnostic], status: int = 200, message: str = "", *,
                tested: dict[str, Any] | None = None, test_url: str | None = None) -> web.Response:
        lines = text.splitlines() or [""]
        marks: dict[int, list[Diagnostic]] = {}
        for error in errors:
            marks.setdefault(min(max(error.line, 1), len(lines)), []).append(error)
        return page("connector.html", status, who=who, kind=kind, obj=obj, text=text, errors=errors,
                    numbered=[(n, line, marks.get(n, [])) for n, line in enumerate(lines, 1)], message=message,
                    may_write=who.may("connectors:write"), tested=tested, test_url=test_url)

    async def apply(self, request: web.Request) -> web.Response:
        try:
            who = await viewer(request, self.console.gate, "connectors:write")
            form = await check_form(request, who)
        except Refused as refused:
            return refused.response
        text = form.get("yaml")
        if not isinstance(text, str) or len(text.encode()) > MAX_BYTES:
            return self._editor(who, None, None, "", [Diagnostic(1, 1, "", "too-large", "the YAML must be text of "
                                                                 f"at most {MAX_BYTES} bytes")], 400)
        text = text.replace("\r\n", "\n")
        _, errors = validate_connector_text(text)
        docs, _ = load_yaml_stream(text)
        body = docs[0].value if docs and not errors else None
        kind = by_kind(body.get("kind")) if isinstance(body, dict) else None
        if errors or kind is None or not isinstance(body, dict):
            return self._editor(who, kind, None, text, errors or [Diagnostic(1, 1, "/kind", "kind",
                                                                             "the file holds no connector")], 422)
        if len([d for d in docs if d.value is not None]) != 1:
            return self._editor(who, kind, None, text, [Diagnostic(1, 1, "", "documents", "apply one connector "
                                                                   "at a time")], 422)
        return await self._store(who, kind, body, text, request.remote)

    async def _store(self, who: Viewer, kind: ConnectorKind, body: dict[str, Any], text: str,
                     ip: str | None) -> web.Response:
        name = body["metadata"]["name"]
        expected = str(body["metadata"].get("resourceVersion") or "") or None
        incoming = client_part(kind, body)
        reconciler = self.console.reconciler
        fetched = await reconciler.fetched(kind, incoming)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        missing: list[RedactedRefusal] = []
        before: list[dict | None] = []

        def build(previous: dict | None) -> dict:
            missing.extend(restore_redacted(kind, incoming, previous))
            if missing:
                raise Conflict()
            before[:] = [previous]
            return next_object(incoming, previous, reconciler.checked(kind, incoming, fetched), now)

        try:
            obj, created = await self.console.connectors.put(kind.kind, name, expected, build)
        except Conflict:
            if missing:
                errors = [Diagnostic(1, 1, r.pointer, "redacted", _redacted_message(r)) for r in missing]
            else:
                errors = [Diagnostic(1, 1, "/metadata/resourceVersion", "conflict", "the connector changed since "
                                     "this copy was read: open it again and apply your change to the latest")]
            return self._editor(who, kind, None, text, _located(text, errors), 409)
        if self.console.audit is not None:
            await self.console.audit.record(who.principal, "connector.apply", f"{kind.plural}/{name}", ip=ip,
                                            details=applied_details(kind, before[0] if before else None, obj, created))
        return see_other(f"/console/connectors/{kind.plural}/{name}")


def _redacted_message(refusal: RedactedRefusal) -> str:
    if refusal.changed:
        return (f"{refusal.pointer} is `<redacted>` while {refusal.changed} changes: write the secret or a "
                "reference again, since the stored one would be sent to the new destination")
    return f"{refusal.pointer} is `<redacted>` but no value is stored to keep: write the secret or a reference"


# The sign-in protocol of each kind: its routes' path segment, and what a test result's `kind` says.
_PROTOCOL = {OIDC.kind: "oidc", SAML.kind: "saml"}


def _test_url(kind: ConnectorKind, obj: dict[str, Any]) -> str | None:
    """Where "test sign-in" starts, for a ready connector (the flow comes back to its page)."""
    if not is_ready(obj):
        return None
    name = obj["metadata"]["name"]
    return f"/v1/webapi/{_PROTOCOL[kind.kind]}/test/web?" + urlencode(
        {"connector_id": name, "redirect_url": f"/console/connectors/{kind.plural}/{name}"})


def _located(text: str, errors: list[Diagnostic]) -> list[Diagnostic]:
    """The errors at the line of the field they name, where the file has it."""
    docs, _ = load_yaml_stream(text)
    if not docs:
        return errors
    placed = []
    for error in errors:
        line, column = docs[0].locate(error.pointer) if error.pointer else (error.line, error.column)
        placed.append(Diagnostic(line, column, error.pointer, error.code, error.message))
    return placed
