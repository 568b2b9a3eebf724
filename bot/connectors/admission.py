"""What a connector document must pass to be stored, for every way in: the resource API's PUT
(bot/server/resources/api.py) and the console's "Apply" (bot/server/console/connectors.py) ask these
same functions, so that one document gets one answer — the same refusals, with the same words —
whichever way it comes. Pure.

First the envelope (an accepted `apiVersion`, the kind and name of the place it is written to),
then the shape of the whole (bot/connectors/structure.py). A client's `status` is dropped, never
checked: it is the server's to write. What the reconcile step finds (an unreadable secret, an
issuer that does not answer) does not refuse a document: it is stored and its conditions say so.
"""

from __future__ import annotations

from typing import Any

from bot.connectors.kinds import ConnectorKind
from bot.connectors.resource import RedactedRefusal
from bot.connectors.structure import structural_issues
from bot.documents.diagnostics import Diagnostic
from bot.documents.pointers import human_pointer
from bot.shapes import Issue


def envelope_problem(kind: ConnectorKind, name: str, body: dict[str, Any]) -> str | None:
    """Why the envelope is refused (a version not accepted, another kind or name than the
    place's), or None. The kind and name may be left out: the place gives them (`body` gets them)."""
    version = body.get("apiVersion")
    if version not in kind.accepted_api_versions:
        shown = "missing" if version is None else f"`{version}`" if isinstance(version, str) else "not a string"
        return f"apiVersion {shown} is not accepted for {kind.kind}; accepted: " + ", ".join(kind.accepted_api_versions)
    body_kind = body.setdefault("kind", kind.kind)
    if body_kind != kind.kind:
        return f"kind {body_kind!r} does not match the endpoint, which takes {kind.kind}"
    metadata = body.setdefault("metadata", {})
    if isinstance(metadata, dict):
        body_name = metadata.setdefault("name", name)
        if body_name != name:
            return f"metadata.name {body_name!r} does not match the name in the path ({name!r})"
    return None


def shape_issues(kind: ConnectorKind, body: dict[str, Any]) -> list[Issue]:
    """The schema's issues with the document, its `status` dropped first (the server's to write)."""
    body.pop("status", None)
    return structural_issues(kind, body)


def redacted_cause(refusal: RedactedRefusal) -> dict:
    """Why a `<redacted>` is not filled in: a 422's cause (the console lists the same words)."""
    where = human_pointer(refusal.pointer)
    if refusal.changed:
        return {"field": refusal.pointer, "reason": "placeholder",
                "message": f"{where}: `<redacted>` keeps the stored value only while the fields that decide where "
                           f"it is sent stay the same, and this request changes {human_pointer(refusal.changed)}; "
                           "write the value or a `secret://NAME/KEY` reference"}
    return {"field": refusal.pointer, "reason": "placeholder",
            "message": f"{where}: `<redacted>` keeps the stored value, but none is stored; "
                       "write the value or a `secret://NAME/KEY` reference"}


# YAML problems that mean the body is not YAML at all (400); every other is a bound or a key (422).
_UNDECODABLE = ("yaml-syntax", "multiple-documents")


def unreadable_yaml(doc: Any, problems: list[Diagnostic]) -> str | None:
    """Why a YAML body cannot be read at all (a 400), or None: the words the console's "Apply"
    gives too (bot/server/console/connectors.py), and the resource API's PUT."""
    undecodable = [p for p in problems if p.code in _UNDECODABLE or (p.code == "too-large" and not p.pointer)]
    if not undecodable and not (doc is None and not problems):
        return None
    first = undecodable[0] if undecodable else None
    where = f" (line {first.line}, column {first.column})" if first else ""
    return f"the body is not valid YAML{where}: {first.message if first else 'empty'}"


def cause_of(problem: Diagnostic) -> dict:
    """A YAML problem as a 422's cause (the console's "Apply" lists the same words)."""
    return {"field": problem.pointer, "reason": problem.code,
            "message": f"{problem.message} (line {problem.line}, column {problem.column})"}
