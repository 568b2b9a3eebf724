"""GitHub App authentication: the app's JWT, and installation tokens cached until shortly before expiry.

The JWT is made as gidgethub's `get_jwt` makes it (`iat` backdated 60 s against clock drift, `exp`
10 minutes after that, so at most 9 minutes ahead), signed with the key parsed once. Installation tokens last an hour; one is fetched per
installation and reused until `refresh_margin` seconds before it expires, concurrent callers
waiting for the same fetch. A token GitHub refuses (401) is dropped with `forget`, and the caller
asks again once. Neither the key nor a token ever appears in a repr, a log line or an error.

Across processes (bot.github.coordination): a token missing here is looked for in the shared
store under the installation's shared lock before it is fetched, so one installation has one
token at a time however many processes ask; what is stored is sealed.

The key is parsed once a process (`private_key`): parsing a PEM RSA key checks the key's numbers,
about 70 ms of CPU, which signing each JWT from the PEM text paid again.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import cachetools
import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from gidgethub.abc import GitHubAPI

from bot.github.coordination import Coordination, Sealer
from bot.store.coordination import LocalCoordination

REFRESH_MARGIN = 300.0  # seconds before expiry at which a cached token is replaced
CLOCK_SKEW, JWT_LIFETIME = 60, 600  # seconds: gidgethub's get_jwt


@functools.lru_cache(maxsize=8)
def private_key(pem: str) -> PrivateKeyTypes:
    """The unencrypted PEM key, parsed and checked once a process (the module's docstring); raises
    as cryptography's `load_pem_private_key` does (bot/server/settings.py names the problem)."""
    return load_pem_private_key(pem.encode("utf-8"), password=None)


def app_jwt(app_id: str, pem: str, now: float) -> str:
    """The app's JWT (RS256; the module's docstring); the key must be RSA (the settings check it)."""
    key = private_key(pem)
    if not isinstance(key, RSAPrivateKey):
        raise ValueError("a GitHub App's private key is RSA")
    issued = int(now) - CLOCK_SKEW
    return jwt.encode({"iat": issued, "exp": issued + JWT_LIFETIME, "iss": app_id}, key, algorithm="RS256")


@dataclass(frozen=True)
class InstallationToken:
    token: str = field(repr=False)
    expires_at: float  # epoch seconds


def parse_expiry(value: str) -> float:
    """GitHub's `expires_at` (`2016-07-11T22:14:10Z`) as epoch seconds."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


class Auth(Protocol):
    """How a GitHubApp's calls are authenticated: the app's key (AppAuth), or a token (TokenAuth)."""

    def jwt(self) -> str: ...

    async def installation_token(self, api: GitHubAPI, installation_id: int) -> str: ...

    async def forget(self, installation_id: int, token: str) -> None: ...


class TokenAuth:
    """A token the environment gives, used as it is for every call: GitHub Actions' `GITHUB_TOKEN`
    (an installation token of the GitHub Actions app) for `reviewer review --post`. There is no
    app key, so no JWT, and nothing to fetch again when GitHub refuses it."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __repr__(self) -> str:
        return "TokenAuth()"

    def jwt(self) -> str:
        raise RuntimeError("a token client has no app key: the /app routes need the GitHub App")

    async def installation_token(self, api: GitHubAPI, installation_id: int) -> str:
        return self._token

    async def forget(self, installation_id: int, token: str) -> None:
        """Nothing to drop: the same token is all there is, and the next refusal is the caller's error."""


class AppAuth:
    def __init__(self, app_id: int | str, private_key: str, *, clock: Callable[[], float] = time.time,
                 refresh_margin: float = REFRESH_MARGIN, max_installations: int = 10_000,
                 coordination: Coordination | None = None) -> None:
        self.app_id = str(app_id)
        self._private_key = private_key
        self._clock, self._margin = clock, refresh_margin
        self._shared: Coordination = coordination or LocalCoordination()
        self._sealer = Sealer(private_key)
        self._tokens: cachetools.TLRUCache = cachetools.TLRUCache(
            maxsize=max_installations, ttu=lambda _id, tok, _now: tok.expires_at - refresh_margin, timer=clock)
        self._locks: dict[int, asyncio.Lock] = {}

    def __repr__(self) -> str:
        return f"AppAuth(app_id={self.app_id!r})"

    def jwt(self) -> str:
        """A fresh app JWT (RS256), for the `/app` routes."""
        return app_jwt(self.app_id, self._private_key, time.time())

    async def installation_token(self, api: GitHubAPI, installation_id: int) -> str:
        """The installation's token: cached, else fetched once however many callers ask at the same time."""
        cached = self._tokens.get(installation_id)
        if cached is not None:
            return cached.token
        lock = self._locks.setdefault(installation_id, asyncio.Lock())
        async with lock, self._shared.token_lock(installation_id):
            cached = self._tokens.get(installation_id)
            if cached is not None:
                return cached.token
            token = await self._shared_token(installation_id)
            if token is None:
                data = await api.post(f"/app/installations/{installation_id}/access_tokens", data=b"",
                                      jwt=self.jwt())
                token = InstallationToken(data["token"], parse_expiry(data["expires_at"]))
                await self._shared.save_token(installation_id, self._sealer.seal(token.token, installation_id), token.expires_at)
            self._tokens[installation_id] = token  # not kept if it expires within the margin
            return token.token

    async def _shared_token(self, installation_id: int) -> InstallationToken | None:
        """The token another process fetched, while it has more than the margin to live."""
        stored = await self._shared.load_token(installation_id)
        if stored is None or stored[1] - self._margin <= self._clock():
            return None
        token = self._sealer.unseal(stored[0], installation_id)
        return InstallationToken(token, stored[1]) if token is not None else None

    async def forget(self, installation_id: int, token: str) -> None:
        """Drop a token GitHub refused, unless another caller already replaced it."""
        cached = self._tokens.get(installation_id)
        if cached is not None and cached.token == token:
            del self._tokens[installation_id]
        stored = await self._shared.load_token(installation_id)
        if stored is not None and self._sealer.unseal(stored[0], installation_id) == token:
            await self._shared.drop_token(installation_id, stored[0])
