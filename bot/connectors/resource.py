"""A connector object's lifecycle, pure: what a client may write, what the server keeps, and
what an answer may show.

The server owns `generation`, `resourceVersion`, `uid`, `creationTimestamp` and `status`; a
client's values for them are dropped. Secrets never leave: a literal secret is answered as
`<redacted>`, and `<redacted>` written back means "keep what is stored".

Beside the object the server keeps, under `SOURCE`, the text of the last document the console
applied (redacted, bot/connectors/source.py), so that the console shows the author's order and
comments again; no answer carries it (`redact` drops it), and a client cannot write it.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass
from typing import Any

from bot.connectors.conditions import observe, transition
from bot.connectors.kinds import ConnectorKind
from bot.connectors.problem import Problem
from bot.documents.pointers import get_at, set_at
from bot.secrets.references import REDACTED, is_reference

CLIENT_METADATA = ("name", "namespace", "labels", "annotations")
SOURCE = "consoleSource"  # the server's own field: the console's applied text, never answered


def client_part(kind: ConnectorKind, body: dict) -> dict:
    """The fields a client writes: the envelope, `metadata`'s own fields and `spec`; never `status`."""
    given = body.get("metadata")
    metadata: dict = given if isinstance(given, dict) else {}
    return {
        "apiVersion": kind.api_version,  # accepted versions share one layout: stored as the latest
        "kind": kind.kind,
        "metadata": {k: copy.deepcopy(metadata[k]) for k in CLIENT_METADATA if k in metadata},
        "spec": copy.deepcopy(body.get("spec") or {}),
    }


@dataclass(frozen=True)
class RedactedRefusal:
    """A `<redacted>` the server will not fill in: `pointer` is the secret field, `changed` the
    destination field whose change forbids it ("" when nothing is stored to keep)."""

    pointer: str
    changed: str = ""


def restore_redacted(kind: ConnectorKind, incoming: dict, previous: dict | None) -> list[RedactedRefusal]:
    """Puts the stored value back where the client wrote `<redacted>`; returns the fields it
    refused: those with nothing stored to keep, and all of them when the PUT changes where the
    secret is sent (else an editor who cannot read a secret could send it to their own endpoint).
    """
    redacted = [p for p in kind.secret_pointers if get_at(incoming, p) == REDACTED]
    if not redacted:
        return []
    changed = _changed_destination(kind, incoming, previous)
    refused = []
    for pointer in redacted:
        stored = get_at(previous, pointer) if previous else None
        if not isinstance(stored, str) or stored == REDACTED:
            refused.append(RedactedRefusal(pointer))
        elif changed:
            refused.append(RedactedRefusal(pointer, changed))
        else:
            set_at(incoming, pointer, stored)
    return refused


def _changed_destination(kind: ConnectorKind, incoming: dict, previous: dict | None) -> str:
    """The first field deciding where secrets go that this write changes ("" for none); secrets
    inside such a field (`mfa.client_secret`) are compared as an answer shows them."""
    if previous is None:
        return ""
    new, old = redact(kind, incoming), redact(kind, previous)
    return next((d for d in kind.destination_pointers if get_at(new, d) != get_at(old, d)), "")


def redact(kind: ConnectorKind, obj: dict) -> dict:
    """The object as an answer may show it: references stay, literal secrets become `<redacted>`,
    and the console's kept text is not shown."""
    shown = copy.deepcopy(obj)
    shown.pop(SOURCE, None)
    for pointer in kind.secret_pointers:
        value = get_at(shown, pointer)
        if isinstance(value, str) and value and not is_reference(value):
            set_at(shown, pointer, REDACTED)
    return shown


def next_object(incoming: dict, previous: dict | None, problems: list[Problem], now: str,
                source: str | None = None) -> dict:
    """The object to store: `incoming` (client part) with server-managed metadata and status.

    `generation` starts at 1 and moves only when the spec changes; `resourceVersion` and
    `status.serviceResourceID` are the store's to assign. `source` is the text the console applied
    (None: the previous object's is kept, so that a change through the API keeps the layout).
    """
    old_meta: dict[str, Any] = previous["metadata"] if previous else {}
    old_status: dict[str, Any] = previous.get("status", {}) if previous else {}
    if previous is None:
        generation = 1
    else:
        generation = old_meta["generation"] + (0 if previous.get("spec") == incoming["spec"] else 1)
    metadata = dict(incoming["metadata"])
    metadata.update({
        "generation": generation,
        "uid": old_meta.get("uid") or str(uuid.uuid4()),
        "creationTimestamp": old_meta.get("creationTimestamp") or now,
    })
    status: dict[str, Any] = {
        "conditions": transition(old_status.get("conditions"), observe(problems), generation, now),
    }
    if "serviceResourceID" in old_status:
        status["serviceResourceID"] = old_status["serviceResourceID"]
    kept = source if source is not None else (previous or {}).get(SOURCE)
    return {**incoming, "metadata": metadata, "status": status, **({SOURCE: kept} if kept else {})}
