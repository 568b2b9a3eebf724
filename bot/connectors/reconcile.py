"""The reconcile phase for either kind: what a controller would find before it uses a connector."""

from __future__ import annotations

from bot.connectors.callbacks import callback_problems
from bot.connectors.descriptor_fetch import Fetched
from bot.connectors.field_checks import ConnectorSecrets, placeholders
from bot.connectors.kinds import OIDC, ConnectorKind
from bot.connectors.problem import Problem
from bot.connectors.reconcile_oidc import reconcile_oidc
from bot.connectors.reconcile_saml import reconcile_saml


def reconcile(kind: ConnectorKind, doc: dict, secrets: ConnectorSecrets,
              fetched: dict[str, Fetched] | None = None, public_url: str | None = None) -> list[Problem]:
    """Every problem of a structurally valid document, placeholders first.

    `secrets` without a store checks references for their form only (offline). A field that still
    holds a placeholder is reported as such alone: "not a PEM key" would only restate it. `fetched`
    holds the SAML descriptors fetched from their URLs (by IdP pointer); offline, URLs are checked
    only. `public_url` (REVIEWER_PUBLIC_URL) adds the check that sign-ins can come back to it.
    """
    found = placeholders(doc)
    held = {p.pointer for p in found}
    rest = reconcile_oidc(doc, secrets) if kind is OIDC else reconcile_saml(doc, secrets, fetched or {})
    rest += callback_problems(kind, doc, public_url)
    return found + [p for p in rest if not any(p.pointer == h or p.pointer.startswith(h + "/") for h in held)]
