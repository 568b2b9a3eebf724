"""The IdP metadata behind `entity_descriptor_url` (and `mfa.entity_descriptor_url`) for sign-in.

Documents come from the shared `DescriptorSource` (bot/connectors/descriptor_fetch.py): the one
the resource API's reconcile step fetched, kept an hour, then fetched again so that an IdP
rotating its certificate is followed. The fetch is bounded and the document is parsed by
`parse_descriptor`, which refuses DTDs, entity declarations and external references outright.
A descriptor the connector gives inline (`entity_descriptor`) wins and is never replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.auth.errors import SignInError
from bot.connectors.descriptor import parse_descriptor
from bot.connectors.descriptor_fetch import DescriptorSource, FetchFailed


@dataclass
class DescriptorCache:
    source: DescriptorSource

    async def fill(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The spec (and its `mfa`) with each `entity_descriptor` fetched from its URL where absent."""
        filled = dict(spec)
        if _needs(filled):
            filled["entity_descriptor"] = await self.get(filled["entity_descriptor_url"])
        mfa = filled.get("mfa")
        if isinstance(mfa, dict) and mfa.get("enabled") is True and _needs(mfa):
            filled["mfa"] = {**mfa, "entity_descriptor": await self.get(mfa["entity_descriptor_url"])}
        return filled

    async def get(self, url: str) -> str:
        try:
            text = await self.source.get(url)
        except FetchFailed as failed:
            raise _failed(url, str(failed)) from None
        parsed = parse_descriptor(text)
        if isinstance(parsed, str):
            raise _failed(url, f"the document {parsed}")
        return text


def _needs(spec: dict[str, Any]) -> bool:
    text, url = spec.get("entity_descriptor"), spec.get("entity_descriptor_url")
    return not (isinstance(text, str) and text.strip()) and isinstance(url, str) and bool(url)


def _failed(url: str, why: str) -> SignInError:
    return SignInError("entity-descriptor", f"the identity provider's metadata at {url[:200]} cannot be used: {why}",
                       status=502)
