"""Fetching the IdP metadata behind `entity_descriptor_url` (and `mfa.entity_descriptor_url`).

Both the resource API's reconcile step and SAML sign-in read descriptors through one
`DescriptorSource`: the reconcile step fetches afresh (so a broken URL shows in the connector's
`status.conditions`, not at the first sign-in) and the good document it gets is kept for sign-in,
which re-fetches after an hour so that an IdP rotating its certificate is followed.

The fetch is bounded (a timeout, 1 MB, no redirects, https or http on a loopback host). The text
is not trusted here: callers parse it with `descriptor.parse_descriptor`, which refuses DTDs,
entity declarations and external references outright (no XXE, no entity expansion).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from bot.connectors.descriptor import parse_descriptor
from bot.connectors.field_checks import check_url, present
from bot.documents.pointers import get_at

CACHE_SECONDS = 3600.0
MAX_DESCRIPTOR = 1024 * 1024
TIMEOUT_SECONDS = 10.0
IDENTITY_PROVIDERS = ("/spec", "/spec/mfa")  # where a SAML connector names an IdP


class FetchFailed(Exception):
    """Why the document at a URL cannot be had: its status, size, encoding or reachability."""


@dataclass(frozen=True)
class Fetched:
    """The outcome of fetching one `entity_descriptor_url`: its text, or why there is none."""

    url: str
    text: str | None = None
    error: str | None = None


@dataclass
class DescriptorSource:
    """Bounded fetches on one HTTP session (made on first use), and the good documents kept."""

    timeout: float = TIMEOUT_SECONDS
    max_bytes: int = MAX_DESCRIPTOR
    clock: Callable[[], float] = time.monotonic
    _kept: dict[str, tuple[str, float]] = field(default_factory=dict)
    _http: aiohttp.ClientSession | None = None

    async def fetch(self, url: str) -> str:
        """The document at `url`, fetched now (FetchFailed otherwise); kept when it parses."""
        text = await self._download(url)
        if not isinstance(parse_descriptor(text), str):
            self._kept[url] = (text, self.clock())
        return text

    async def get(self, url: str) -> str:
        """The kept document when under an hour old, else a fresh fetch."""
        kept = self._kept.get(url)
        if kept and self.clock() - kept[1] < CACHE_SECONDS:
            return kept[0]
        return await self.fetch(url)

    def kept(self, url: str) -> str | None:
        """The last good document of `url` this process fetched, whatever its age (no fetch)."""
        kept = self._kept.get(url)
        return kept[0] if kept else None

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def _download(self, url: str) -> str:
        if check_url(url, ""):
            raise FetchFailed("it is not an https:// URL (http is read only on a loopback host)")
        if self._http is None:
            self._http = aiohttp.ClientSession()
        try:
            async with self._http.get(url, timeout=aiohttp.ClientTimeout(total=self.timeout),
                                      allow_redirects=False) as response:
                body = await _read_bounded(response.content, self.max_bytes + 1)
                status = response.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            why = f"no answer within {self.timeout:g} seconds" if isinstance(exc, TimeoutError) \
                else exc.__class__.__name__
            raise FetchFailed(f"it could not be reached ({why})") from None
        if status != 200:
            raise FetchFailed(f"it answered HTTP {status}")
        if len(body) > self.max_bytes:
            raise FetchFailed(f"the document is larger than {self.max_bytes // 1024} KB")
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            raise FetchFailed("the document is not UTF-8 text") from None


async def _read_bounded(stream: aiohttp.StreamReader, limit: int) -> bytes:
    """Up to `limit` bytes of the body: one `read(n)` returns what has arrived so far, not n."""
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = await stream.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def descriptor_urls(doc: dict) -> dict[str, str]:
    """Pointer of each IdP (`/spec`, `/spec/mfa`) → the URL to fetch for it: the ones in use
    (no inline `entity_descriptor`, MFA enabled) whose URL passes the https/loopback rule."""
    found: dict[str, str] = {}
    for base in IDENTITY_PROVIDERS:
        if base != "/spec" and get_at(doc, f"{base}/enabled") is not True:
            continue
        url = get_at(doc, f"{base}/entity_descriptor_url")
        inline = get_at(doc, f"{base}/entity_descriptor")
        if isinstance(url, str) and present(url) and not (isinstance(inline, str) and present(inline)) \
                and not check_url(url, ""):
            found[base] = url
    return found


async def fetch_descriptors(doc: dict, source: DescriptorSource) -> dict[str, Fetched]:
    """Every descriptor the SAML connector `doc` names by URL, fetched at once (each bounded)."""
    urls = descriptor_urls(doc)
    outcomes = await asyncio.gather(*(_one(source, url) for url in urls.values()))
    return dict(zip(urls, outcomes, strict=True))


async def kept_descriptors(doc: dict, source: DescriptorSource) -> dict[str, Fetched] | None:
    """The descriptors of `doc` as sign-in would read them (kept under an hour, else fetched), for a
    background reconcile; when one cannot be had, the last good one this process kept, else None:
    a background reconcile leaves such a connector's status as its last apply found it, so that an
    IdP's passing outage (or a process that never fetched) does not flip it back and forth."""
    found: dict[str, Fetched] = {}
    for base, url in descriptor_urls(doc).items():
        try:
            found[base] = Fetched(url, text=await source.get(url))
        except FetchFailed:
            text = source.kept(url)
            if text is None:
                return None
            found[base] = Fetched(url, text=text)
    return found


async def _one(source: DescriptorSource, url: str) -> Fetched:
    try:
        return Fetched(url, text=await source.fetch(url))
    except FetchFailed as failed:
        return Fetched(url, error=str(failed))
