"""Who may change where a connector sends its secrets (pure; docs/connectors.md "Changing where a
connector sends its secret").

A connector's client secret, service account or keys are sent to the places its spec names: the
issuer (and the token and userinfo endpoints its discovery document gives), the directory a group
lookup asks, the SAML SSO and single log-out services and the descriptor that names them. The
secret itself may be a `secret://` or `file://` reference, shown as written: whoever may edit the
connector could re-point one of those places at a host of their own and receive the secret at the
next sign-in. So a write that changes one of them (`ConnectorKind.destination_pointers`) on an
existing connector needs `connectors:write` un-narrowed and, where the admin file asks for MFA
(`access.mfa.required` names anything), an MFA check in the last five minutes; the break-glass
token, which opens everything and can take no MFA round, may. The audit log records the fields
moved with their old and new hosts (`Moved`): hosts, never a value that may be a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from bot.auth.access import MFA_WINDOW, Access
from bot.auth.guard import BREAK_GLASS, Denial, Principal
from bot.connectors.kinds import ConnectorKind
from bot.connectors.resource import redact
from bot.documents.pointers import get_at

PERMISSION = "connectors:write"
_URL = re.compile(r"https?://[^\s\"'<>]+", re.IGNORECASE)


@dataclass(frozen=True)
class Moved:
    """A field deciding where secrets go, changed: its name and the hosts it named before and now."""

    field: str  # `spec.issuer_url`
    old_hosts: tuple[str, ...]
    new_hosts: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "from": list(self.old_hosts), "to": list(self.new_hosts)}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _hosts(value: Any) -> tuple[str, ...]:
    """The hosts of the web addresses in a value (a URL, an object holding some, a descriptor's XML)."""
    found: dict[str, None] = {}
    for text in _strings(value):
        for url in _URL.findall(text):
            try:
                host = urlsplit(url).hostname
            except ValueError:
                continue
            if host:
                found[host.lower()] = None
    return tuple(found)


def moved(kind: ConnectorKind, incoming: dict, previous: dict | None) -> list[Moved]:
    """The fields deciding where secrets go that a write changes on an existing connector (a new
    connector moves nothing: its secrets are given with it). Compared as an answer shows them."""
    if previous is None:
        return []
    new, old = redact(kind, incoming), redact(kind, previous)
    return [Moved(pointer.strip("/").replace("/", "."), _hosts(get_at(old, pointer)), _hosts(get_at(new, pointer)))
            for pointer in kind.destination_pointers if get_at(new, pointer) != get_at(old, pointer)]


def may_move(principal: Principal, access: Access, now: float, changes: list[Moved], name: str) -> Denial | None:
    """None when `principal` may make `changes` to connector `name`; else the refusal, saying why."""
    if not changes:
        return None
    fields = ", ".join(f"`{m.field}`" for m in changes)
    what = f"changing where connector `{name}` sends its secrets ({fields})"
    if not principal.grant.allows(PERMISSION, None):
        return Denial(403, "Forbidden", f"{what} needs {PERMISSION} on every account; your roles grant it narrowed "
                                        "to accounts")
    session = principal.session
    if session is None or session.connector == BREAK_GLASS or not access.mfa_required:
        return None
    verified = session.mfa_verified_at
    if verified is None or now - verified > MFA_WINDOW:
        return Denial(403, "MFARequired", f"{what} needs an MFA check in the last 5 minutes; run one and apply "
                                          "again")
    return None
