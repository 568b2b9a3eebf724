"""The identity provider's published documents: discovery and JWKS, fetched and cached.

Discovery (`issuer_url` + `/.well-known/openid-configuration`) and the JWKS are cached for an
hour. A token signed with a `kid` the cached set lacks asks for a set fetched after that one (a
provider rotating its keys): one fetch, never sooner than a second after the set's previous fetch
ended, so that forged `kid`s cannot make us hammer the provider. A sign-in that asks within that
second waits it out rather than being refused — a key rotated in just after a forged `kid` made us
refresh is still found — and every sign-in waiting meanwhile shares the one fetch.
The provider's endpoints must be https, or http on a loopback host (a provider on this machine,
as connectors' URLs may be). Answers are bounded in size and time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bot.auth.errors import SignInError
from bot.auth.redirects import origin_of
from bot.documents.bounded_read import read_at_most

CACHE_SECONDS = 3600.0
REFRESH_GAP = 1.0  # seconds from the end of one fetch of a JWKS to the start of the next
MAX_DOCUMENT = 1024 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=15)
ENDPOINTS = ("authorization_endpoint", "token_endpoint", "jwks_uri")


def allowed_endpoint(url: Any) -> bool:
    """https, or http on a loopback host."""
    if not isinstance(url, str):
        return False
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return False
    if parts.scheme == "https" and host:
        return True
    if parts.scheme != "http":
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def same_issuer(configured: str, published: str) -> bool:
    return configured.rstrip("/") == published.rstrip("/")


@dataclass
class _Cached:
    value: Any
    fetched: float


@dataclass(frozen=True)
class KeySet:
    """A JWKS document as fetched from its URL; `number` counts the fetches of that URL (1, 2…)."""

    document: dict[str, Any]
    number: int
    fetched: float  # the clock when its fetch ended


@dataclass
class ProviderCache:
    http: aiohttp.ClientSession
    clock: Any = time.monotonic
    _discovery: dict[str, _Cached] = field(default_factory=dict)
    _jwks: dict[str, KeySet] = field(default_factory=dict)
    _jwks_tried: dict[str, float] = field(default_factory=dict)  # when the last fetch, good or not, ended
    _jwks_locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    async def metadata(self, issuer: str) -> dict[str, Any]:
        """The discovery document, checked: its `issuer` is the connector's, its endpoints usable."""
        cached = self._discovery.get(issuer)
        if cached and self.clock() - cached.fetched < CACHE_SECONDS:
            return dict(cached.value)
        url = issuer.rstrip("/") + "/.well-known/openid-configuration"
        document = await self.fetch_json(url, "discovery")
        if not isinstance(document.get("issuer"), str) or not same_issuer(issuer, document["issuer"]):
            raise SignInError("discovery", f"the provider's discovery document names the issuer "
                                           f"`{str(document.get('issuer'))[:200]}`, not the connector's "
                                           f"issuer_url `{issuer}`; set issuer_url to the provider's issuer")
        for name in ENDPOINTS:
            if not allowed_endpoint(document.get(name)):
                raise SignInError("discovery", f"the provider's discovery document lacks a usable {name} "
                                               "(an https URL, or http on a loopback host)")
        self._discovery[issuer] = _Cached(document, self.clock())
        return dict(document)

    async def key_set(self, url: str) -> KeySet:
        """The cached key set while under an hour old, else a fresh one."""
        cached = self._jwks.get(url)
        if cached is not None and self.clock() - cached.fetched < CACHE_SECONDS:
            return cached
        return await self._after(url, cached.number if cached else 0)

    async def newer_key_set(self, url: str, seen: KeySet) -> KeySet:
        """A key set fetched after `seen` (a token named a key `seen` lacks): the one another sign-in
        already fetched meanwhile, else one fetched now — once REFRESH_GAP has passed since the last
        fetch ended, so that forged `kid`s never fetch more than once a second."""
        return await self._after(url, seen.number)

    async def _after(self, url: str, number: int) -> KeySet:
        """A key set numbered above `number`; one fetch at a time per URL, shared by every waiter."""
        async with self._jwks_locks.setdefault(url, asyncio.Lock()):
            current = self._jwks.get(url)
            if current is not None and current.number > number:
                return current
            tried = self._jwks_tried.get(url)
            while tried is not None and (wait := tried + REFRESH_GAP - self.clock()) > 0:
                await asyncio.sleep(wait)
            try:
                document = await self.fetch_json(url, "jwks")
            finally:
                self._jwks_tried[url] = self.clock()
            if not isinstance(document.get("keys"), list):
                raise SignInError("jwks", "the provider's JWKS has no `keys` list")
            fresh = KeySet(document, (current.number if current else 0) + 1, self._jwks_tried[url])
            self._jwks[url] = fresh
            return fresh

    async def fetch_json(self, url: str, check: str, **request: Any) -> dict[str, Any]:
        method = "POST" if "data" in request else "GET"
        try:
            async with self.http.request(method, url, timeout=TIMEOUT, allow_redirects=False,
                                         **request) as response:
                body = await read_at_most(response.content, MAX_DOCUMENT)
                status = response.status
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise SignInError(check, f"the provider could not be reached at {origin_of(url)} "
                                     f"({exc.__class__.__name__})", status=502) from None
        value = _json_object(body)
        if status >= 400 and check == "token-exchange" and value is not None:
            error = str(value.get("error", "error"))[:100]
            raise SignInError(check, f"the provider refused the code exchange ({error}); check the client id "
                                     "and secret, and that the callback URL is registered", status=502)
        if status != 200 or value is None or len(body) > MAX_DOCUMENT:
            raise SignInError(check, f"the provider's {check} answer from {origin_of(url)} was not a JSON object "
                                     f"(HTTP {status})", status=502)
        return value


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
