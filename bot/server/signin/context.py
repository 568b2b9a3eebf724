"""What every sign-in endpoint shares, complete when it is made: the stores, the connectors'
secrets, the gate and its cookies, the settings, and the OIDC providers' cache, which the app's
start-up opens (it needs the running loop's HTTP session) and its shutdown closes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import aiohttp

from bot.auth.oidc.provider import ProviderCache
from bot.auth.saml.protocol import KEY_FILES
from bot.auth.service_keys import KEY_NAME, make_private_pem
from bot.auth.store import AuthStore
from bot.connectors.descriptor_fetch import DescriptorSource
from bot.connectors.field_checks import ConnectorSecrets
from bot.server.signin.cookies import Cookies
from bot.server.signin.gate import Gate
from bot.store.model import ConnectorStore


class Providers:
    """The OIDC providers' discovery and keys (bot/auth/oidc/provider.py), while the app runs."""

    def __init__(self) -> None:
        self._cache: ProviderCache | None = None

    @property
    def cache(self) -> ProviderCache:
        if self._cache is None:
            raise RuntimeError("the sign-in routes are used before the app started")
        return self._cache

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[None]:
        async with aiohttp.ClientSession() as http:
            self._cache = ProviderCache(http)
            try:
                yield
            finally:
                self._cache = None


@dataclass(frozen=True)
class SignInContext:
    connector_store: ConnectorStore
    secrets: ConnectorSecrets
    store: AuthStore
    gate: Gate
    public_url: str | None
    session_ttl: int
    descriptors: DescriptorSource  # SAML metadata, fetched at reconcile time and kept for sign-in
    directory_url: str | None = None  # REVIEWER_DIRECTORY_URL: group lookups go there instead
    providers: Providers = field(default_factory=Providers)

    @property
    def cookies(self) -> Cookies:
        return self.gate.cookies

    @property
    def provider(self) -> ProviderCache:
        return self.providers.cache

    async def signing_key(self) -> str:
        return await self.store.key(KEY_NAME, make_private_pem)

    async def lifecycle(self) -> AsyncIterator[None]:
        """The app's start/stop step: the sign-in store and the providers' HTTP session open while it runs."""
        await self.store.open()
        async with self.providers.opened():
            try:
                yield
            finally:
                await self.store.close()
                KEY_FILES.remove()
