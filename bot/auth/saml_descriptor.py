"""The IdP metadata behind `entity_descriptor_url` (and `mfa.entity_descriptor_url`), fetched when a
sign-in needs it and kept an hour, so that an IdP rotating its certificate is followed.

The fetch is bounded (10 seconds, 1 MB, no redirects, https or http on a loopback host) and the
document is parsed by `parse_descriptor`, which refuses DTDs, entity declarations and external
references outright: a descriptor can neither read local files nor expand without end. A
descriptor the connector gives inline (`entity_descriptor`) wins and is never replaced.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bot.auth.errors import SignInError
from bot.auth.oidc_provider import allowed_endpoint
from bot.connectors.descriptor import parse_descriptor

CACHE_SECONDS = 3600.0
MAX_DESCRIPTOR = 1024 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=10)


@dataclass
class DescriptorCache:
    http: aiohttp.ClientSession
    clock: Any = time.monotonic
    _kept: dict[str, tuple[str, float]] = field(default_factory=dict)

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
        kept = self._kept.get(url)
        if kept and self.clock() - kept[1] < CACHE_SECONDS:
            return kept[0]
        text = await _fetch(self.http, url)
        parsed = parse_descriptor(text)
        if isinstance(parsed, str):
            raise _failed(url, f"the document {parsed}")
        self._kept[url] = (text, self.clock())
        return text


def _needs(spec: dict[str, Any]) -> bool:
    text, url = spec.get("entity_descriptor"), spec.get("entity_descriptor_url")
    return not (isinstance(text, str) and text.strip()) and isinstance(url, str) and bool(url)


async def _fetch(http: aiohttp.ClientSession, url: str) -> str:
    if not allowed_endpoint(url):
        raise _failed(url, "it is not https (http is read only on a loopback host)")
    try:
        async with http.get(url, timeout=TIMEOUT, allow_redirects=False) as response:
            body = await response.content.read(MAX_DESCRIPTOR + 1)
            status = response.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise _failed(url, f"it could not be reached ({exc.__class__.__name__})") from None
    if status != 200:
        raise _failed(url, f"it answered HTTP {status}")
    if len(body) > MAX_DESCRIPTOR:
        raise _failed(url, f"the document is larger than {MAX_DESCRIPTOR // 1024} KB")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise _failed(url, "the document is not UTF-8 text") from None


def _failed(url: str, why: str) -> SignInError:
    return SignInError("entity-descriptor", f"the identity provider's metadata at {url[:200]} cannot be used: {why}",
                       status=502)
