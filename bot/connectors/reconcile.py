"""The reconcile phase for either kind: what a controller would find before it uses a connector."""

from __future__ import annotations

from bot.connectors.checks import placeholders
from bot.connectors.descriptor_fetch import Fetched
from bot.connectors.kinds import OIDC, ConnectorKind
from bot.connectors.problem import Problem
from bot.connectors.reconcile_oidc import reconcile_oidc
from bot.connectors.reconcile_saml import reconcile_saml
from bot.secrets import SecretStore


def reconcile(kind: ConnectorKind, doc: dict, secrets: SecretStore | None,
              fetched: dict[str, Fetched] | None = None) -> list[Problem]:
    """Every problem of a structurally valid document, placeholders first.

    `secrets` None checks references for their form only (offline). A field that still holds a
    placeholder is reported as such alone: "not a PEM key" would only restate it. `fetched` holds
    the SAML descriptors fetched from their URLs (by IdP pointer); offline, URLs are checked only.
    """
    found = placeholders(doc)
    held = {p.pointer for p in found}
    rest = reconcile_oidc(doc, secrets) if kind is OIDC else reconcile_saml(doc, secrets, fetched or {})
    return found + [p for p in rest if not any(p.pointer == h or p.pointer.startswith(h + "/") for h in held)]
