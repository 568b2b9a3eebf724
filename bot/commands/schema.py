"""`reviewer schema NAME` and `reviewer crds`: the published schemas, printed.

Connector schemas come from `bot.connectors`, imported only when asked for, so printing the
repository schema stays light.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import Any

from bot.config.schemas import SHIPPED, render

CONNECTOR_SCHEMAS = {
    "oidc-connector": "bot.connectors.schemas:oidc_json_schema",
    "saml-connector": "bot.connectors.schemas:saml_json_schema",
}
NAMES = (*SHIPPED, *CONNECTOR_SCHEMAS)


def _lazy(target: str) -> Callable[[], Any] | None:
    module_name, func_name = target.split(":")
    try:
        return getattr(importlib.import_module(module_name), func_name)
    except (ImportError, AttributeError):
        return None


def run_schema(args: argparse.Namespace) -> int:
    name = args.name
    make = SHIPPED.get(name) or (_lazy(CONNECTOR_SCHEMAS[name]) if name in CONNECTOR_SCHEMAS else None)
    if make is None:
        reason = "is not available in this build" if name in CONNECTOR_SCHEMAS else "is not a schema"
        print(f"reviewer schema: {name!r} {reason}; choose one of {', '.join(NAMES)}", file=sys.stderr)
        return 2
    sys.stdout.write(render(make()))
    return 0


def run_crds(args: argparse.Namespace) -> int:
    crds_yaml = _lazy("bot.connectors.crds:crds_yaml")
    if crds_yaml is None:
        print("reviewer crds: the connector CustomResourceDefinitions are not available in this build",
              file=sys.stderr)
        return 2
    sys.stdout.write(crds_yaml())
    return 0
