"""What `reviewer schema` and `reviewer crds` print for connectors (bot.commands.schema calls these)."""

from __future__ import annotations

from typing import Any

from bot.connectors.crds import crds_yaml
from bot.connectors.kinds import OIDC, SAML, ConnectorKind
from bot.connectors.structure import shape_of
from bot.shapes import to_json_schema

SCHEMA_BASE = "https://reviewer.dev/schemas"

__all__ = ["crds_yaml", "oidc_json_schema", "saml_json_schema"]


def _json_schema(kind: ConnectorKind) -> dict[str, Any]:
    return to_json_schema(shape_of(kind), schema_id=f"{SCHEMA_BASE}/{kind.cli_name}.json",
                          title=f"{kind.kind} ({kind.api_version})")


def oidc_json_schema() -> dict[str, Any]:
    return _json_schema(OIDC)


def saml_json_schema() -> dict[str, Any]:
    return _json_schema(SAML)
