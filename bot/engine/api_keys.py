"""Resolving a provider's `apiKey` reference at call time.

The admin file holds references, never keys: `env://VAR` reads the process environment,
`secret://NAME/KEY` the server's secret store (`bot.secrets.references`, shared with the connector
resources, so both kinds of secret live in one place). Resolving at call time means a rotated key
is picked up without a restart. Errors name the reference and never carry a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from os import PathLike

from bot.secrets.references import SecretError, SecretStore, is_reference, resolve

_ENV = re.compile(r"^env://([A-Za-z_][A-Za-z0-9_]*)$")


class ApiKeyError(Exception):
    """A reference that cannot be resolved. The message names the reference, never a value."""


def resolve_api_key(
    reference: str, *, environ: Mapping[str, str], secrets_dir: str | PathLike | None
) -> str:
    env = _ENV.match(reference)
    if env:
        value = environ.get(env.group(1))
        if not value:
            state = "is empty" if value == "" else "is not set"
            raise ApiKeyError(f"{reference}: environment variable {env.group(1)} {state}")
        return value
    if is_reference(reference):
        try:
            return resolve(reference, SecretStore(secrets_dir))
        except SecretError as error:
            raise ApiKeyError(f"{reference}: {error}") from None
    raise ApiKeyError("the apiKey is not a reference: use secret://NAME/KEY or env://VAR")
