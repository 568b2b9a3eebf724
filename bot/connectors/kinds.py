"""The two connector kinds: their names on every surface (API path, CLI, CRD) and secret fields."""

from __future__ import annotations

import re
from dataclasses import dataclass

GROUP = "resources.service.dev"

# Names the service keeps for its built-in login methods (as Teleport does): never a connector's.
RESERVED_NAMES = frozenset({"local", "passwordless", "headless", "browser"})


@dataclass(frozen=True)
class ConnectorKind:
    kind: str  # the `kind` in a body: ServiceOIDCConnector
    cli_name: str  # `reviewer schema` / `validate --kind`: oidc-connector
    plural: str  # the API path segment and the CRD plural
    version: str  # the version stored and served at the API path
    accepted_versions: tuple[str, ...]  # versions a body may carry (converted to `version`)
    # JSON pointers (from the document root) of fields that hold secret values: resolved from
    # `secret://` references, redacted in every answer, never echoed in a message.
    secret_pointers: tuple[str, ...]
    # Fields that decide where a secret is sent (endpoints, descriptors, client ids): a PUT that
    # changes one of them must write its secrets anew, not keep them with `<redacted>`.
    destination_pointers: tuple[str, ...]

    @property
    def api_version(self) -> str:
        return f"{GROUP}/{self.version}"

    @property
    def accepted_api_versions(self) -> tuple[str, ...]:
        return tuple(f"{GROUP}/{v}" for v in self.accepted_versions)

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def singular(self) -> str:
        return self.plural[:-1]


OIDC = ConnectorKind(
    kind="ServiceOIDCConnector",
    cli_name="oidc-connector",
    plural="oidcconnectors",
    version="v3",
    accepted_versions=("v2", "v3"),  # v2 has the same layout: accepted and stored as v3
    secret_pointers=("/spec/client_secret", "/spec/mfa/client_secret", "/spec/cloud_service_account"),
    destination_pointers=("/spec/issuer_url", "/spec/client_id", "/spec/mfa", "/spec/directory_id_groups_provider",
                          "/spec/cloud_admin_email"),
)

SAML = ConnectorKind(
    kind="ServiceSAMLConnector",
    cli_name="saml-connector",
    plural="samlconnectors",
    version="v2",
    accepted_versions=("v2",),
    secret_pointers=(
        "/spec/credentials/oauth/client_secret",
        "/spec/signing_key_pair/private_key",
        "/spec/assertion_key_pair/private_key",
    ),
    destination_pointers=("/spec/entity_descriptor", "/spec/entity_descriptor_url", "/spec/sso", "/spec/issuer",
                          "/spec/single_logout_url", "/spec/mfa", "/spec/credentials",
                          "/spec/directory_id_groups_provider"),
)

KINDS = (OIDC, SAML)


_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
NAME_RULE = "a lowercase RFC 1123 name (a-z, 0-9, `-` and `.`, at most 253 characters)"


def is_connector_name(name: object) -> bool:
    """Whether `name` could name a stored connector: checked before any store lookup, so that a
    NUL or an undecodable byte in a URL or a body is "no such connector", not a database error."""
    return isinstance(name, str) and len(name) <= 253 and _NAME.fullmatch(name) is not None


def by_kind(kind: object) -> ConnectorKind | None:
    return next((k for k in KINDS if k.kind == kind), None)


def by_cli_name(name: str) -> ConnectorKind | None:
    return next((k for k in KINDS if k.cli_name == name), None)
