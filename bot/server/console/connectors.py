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
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from aiohttp import web
from ruamel.yaml import YAML

from bot.auth.connectors import is_ready
from bot.auth.destinations import Moved, may_move, moved
from bot.auth.guard import Denial
from bot.auth.outcomes import take_test_result
from bot.connectors.admission import cause_of, envelope_problem, redacted_cause, shape_issues, unreadable_yaml
from bot.connectors.kinds import KINDS, OIDC, SAML, ConnectorKind, by_kind, is_connector_name
from bot.connectors.resource import (
    SOURCE,
    RedactedRefusal,
    client_part,
    next_object,
    redact,
    restore_redacted,
)
from bot.connectors.source import kept_text, shown_text
from bot.documents.diagnostics import Diagnostic
from bot.documents.yamldoc import MAX_BYTES, load_yaml
from bot.server import logging as log
from bot.server.console.access import Refused, Viewer, check_form, denied_page, viewer
from bot.server.console.context import Console
from bot.server.console.render import page, see_other
from bot.server.resources.api import applied_details, name_clash
from bot.shapes.validate import to_diagnostics
from bot.store.model import Conflict

logger = log.get("console")


@dataclass(frozen=True)
class Template:
    """A connector to start from for a common identity provider (the documented examples,
    docs/examples/connectors, which the tests keep equal to these)."""

    name: str
    label: str

    def text(self) -> str:
        return (TEMPLATE_DIR / f"{self.name}.yaml").read_text()


TEMPLATE_DIR = Path(__file__).parent / "connector_templates"
TEMPLATES = {t.name: t for t in (
    Template("okta-oidc", "Okta (OIDC)"), Template("entra-id-oidc", "Microsoft Entra ID (OIDC)"),
    Template("google-workspace-oidc", "Google Workspace (OIDC)"), Template("keycloak-oidc", "Keycloak (OIDC)"),
    Template("okta-saml", "A SAML 2.0 identity provider (Okta's shown)"))}


def _shown(kind: ConnectorKind, obj: dict[str, Any]) -> dict[str, Any]:
    """The object as an operator edits it: the client part, redacted, with its resourceVersion."""
    shown = client_part(kind, redact(kind, obj))
    version = (obj.get("metadata") or {}).get("resourceVersion")
    if version:
        shown["metadata"]["resourceVersion"] = version
    return shown


def to_yaml(kind: ConnectorKind, obj: dict[str, Any]) -> str:
    """The object in the default layout (one applied through the API: no author's text is kept)."""
    shown = _shown(kind, obj)
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
        chosen = TEMPLATES.get(request.query.get("template", ""))
        # "deleted" is said only of a connector name that is indeed not there (a link cannot make it up)
        deleted = request.query.get("deleted", "")
        if not is_connector_name(deleted) or any(obj["metadata"]["name"] == deleted for _, obj in rows):
            deleted = ""
        return page("connectors.html", who=who, rows=rows, templates=TEMPLATES, chosen=chosen,
                    text=chosen.text() if chosen else "", deleted=deleted)

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
        text = shown_text(obj.get(SOURCE), _shown(kind, obj)) or to_yaml(kind, obj)
        return self._editor(who, kind, obj, text, [], tested=tested,
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
        kind, body, errors = admitted(text)
        if errors or kind is None or body is None:
            return self._editor(who, kind, None, text, errors, 422)
        return await self._store(who, kind, body, text, request)

    async def delete(self, request: web.Request) -> web.Response:
        """Deletes the connector, as the resource API's DELETE does: its sessions end with it."""
        try:
            who = await viewer(request, self.console.gate, "connectors:write")
            await check_form(request, who)
        except Refused as refused:
            return refused.response
        kind = next((k for k in KINDS if k.plural == request.match_info["plural"]), None)
        name = request.match_info["name"]
        obj = await self.console.connectors.delete(kind.kind, name) if kind and is_connector_name(name) else None
        if kind is None or obj is None:
            return page("missing.html", 404, who=who, what="connector")
        ended = await self.console.gate.end_sessions(name)
        if self.console.audit is not None:
            await self.console.audit.record(who.principal, "connector.delete", f"{kind.plural}/{name}",
                                            ip=request.remote, details={"sessionsEnded": ended})
        logger.info("connector deleted from the console: %s/%s (%d sessions ended)", kind.plural, name, ended,
                    extra=log.fields(user=who.name))
        return see_other(f"/console/connectors?deleted={quote(name)}")

    async def _store(self, who: Viewer, kind: ConnectorKind, body: dict[str, Any], text: str,
                     request: web.Request) -> web.Response:
        name = body["metadata"]["name"]
        expected = str(body["metadata"].get("resourceVersion") or "") or None
        clash = await name_clash(self.console.connectors, kind, name)
        if clash is not None:
            return self._editor(who, kind, None, text, _located(text, [Diagnostic(1, 1, "/metadata/name", "conflict",
                                                                                  clash)]), 409)
        incoming = client_part(kind, body)
        reconciler = self.console.reconciler
        fetched = await reconciler.fetched(kind, incoming)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        missing: list[RedactedRefusal] = []
        kept = kept_text(kind, text)
        before: list[dict | None] = []

        moves: list[Moved] = []

        def build(previous: dict | None) -> dict:
            moves[:] = moved(kind, incoming, previous)  # where its secrets go (bot/auth/destinations.py)
            refused = may_move(who.principal, self.console.gate.access(), time.time(), moves, name)
            if refused is not None:
                raise _MoveRefused(refused)
            missing.extend(restore_redacted(kind, incoming, previous))
            if missing:
                raise Conflict()
            before[:] = [previous]
            return next_object(incoming, previous, reconciler.checked(kind, incoming, fetched), now, kept)

        try:
            obj, created = await self.console.connectors.put(kind.kind, name, expected, build)
        except _MoveRefused as refused:
            session = who.principal.session
            mfa = session.connector if refused.denial.reason == "MFARequired" and session is not None else None
            return denied_page(request, 403, refused.denial.message, mfa_connector=mfa)
        except Conflict:
            if missing:
                errors = [Diagnostic(1, 1, r.pointer, "placeholder", redacted_cause(r)["message"]) for r in missing]
            else:
                errors = [Diagnostic(1, 1, "/metadata/resourceVersion", "conflict", "the connector changed since "
                                     "this copy was read: open it again and apply your change to the latest")]
            return self._editor(who, kind, None, text, _located(text, errors), 422 if missing else 409)
        if self.console.audit is not None:
            await self.console.audit.record(who.principal, "connector.apply", f"{kind.plural}/{name}",
                                            ip=request.remote,
                                            details=applied_details(kind, before[0] if before else None, obj, created,
                                                                    moves))
        return see_other(f"/console/connectors/{kind.plural}/{name}")


class _MoveRefused(Exception):
    def __init__(self, denial: Denial) -> None:
        super().__init__(denial.message)
        self.denial = denial


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
    doc, _ = load_yaml(text)
    if doc is None:
        return errors
    placed = []
    for error in errors:
        line, column = doc.locate(error.pointer) if error.pointer else (error.line, error.column)
        placed.append(Diagnostic(line, column, error.pointer, error.code, error.message))
    return placed


def admitted(text: str) -> tuple[ConnectorKind | None, dict[str, Any] | None, list[Diagnostic]]:
    """(kind, body, errors) of an applied document: read as the resource API reads a YAML body
    (one document: bot.documents.yamldoc.load_yaml), then the API's own checks (bot/connectors/admission.py)
    with their words, each placed at its line. The kind comes from the document (the API's from
    its path), and so does the name."""
    doc, problems = load_yaml(text)
    unreadable = unreadable_yaml(doc, problems)
    if unreadable:
        first = problems[0] if problems else Diagnostic(1, 1, "", "yaml-syntax", "")
        return None, None, [Diagnostic(first.line, first.column, "", first.code, unreadable)]
    if problems or doc is None:
        return None, None, [Diagnostic(p.line, p.column, p.pointer, p.code, cause_of(p)["message"]) for p in problems]
    body = doc.value
    if not isinstance(body, dict):
        line, column = doc.start
        return None, None, [Diagnostic(line, column, "", "not-a-mapping", "the body must be one object (a mapping "
                                                                        "with apiVersion, kind, metadata and spec)")]
    kind = by_kind(body.get("kind"))
    if kind is None:
        line, column = doc.locate("/kind")
        kinds = ", ".join(k.kind for k in KINDS)
        return None, None, [Diagnostic(line, column, "/kind", "kind-mismatch", f"kind: one of {kinds}")]
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str):
        line, column = doc.locate("/metadata")
        return kind, None, [Diagnostic(line, column, "/metadata", "required", "metadata.name: the console applies "
                                       "a connector by the name its document gives")]
    envelope = envelope_problem(kind, name, body)
    if envelope:
        pointer = "/apiVersion" if envelope.startswith("apiVersion") else "/kind"
        line, column = doc.locate(pointer)
        return kind, None, [Diagnostic(line, column, pointer, "api-version" if pointer == "/apiVersion"
                                       else "kind-mismatch", envelope)]
    issues = shape_issues(kind, body)
    if issues:
        return kind, None, to_diagnostics(issues, doc)
    return kind, body, []
