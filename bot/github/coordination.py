"""What the processes of one deployment share about GitHub: installation tokens, and the right to
write to an installation.

GitHub asks that content-creating requests to one installation go one at a time, and that a
`retry-after` be honoured; with several worker processes, both must hold across processes, and one
installation token at a time (each fetch costs a call and GitHub caps them). `Coordination` is the
seam: `LocalCoordination` (one process, SQLite: in-memory locks and nothing shared; bot.store.coordination,
where the PostgreSQL one falls back to it) is the default; the PostgreSQL store provides one whose locks are advisory locks and whose tokens live in
a table (bot.store.postgres.coordination). Tokens reach it sealed (`seal`/`unseal`, AES-GCM under a
key derived from the app's private key), so the database never holds a usable token.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from bot.secrets.aead import OpenError, open_bytes, seal_bytes


class Coordination(Protocol):
    async def load_token(self, installation_id: int) -> tuple[bytes, float] | None: ...
    async def save_token(self, installation_id: int, sealed: bytes, expires_at: float) -> None: ...
    async def drop_token(self, installation_id: int, sealed: bytes | None) -> None: ...
    def token_lock(self, installation_id: int) -> AbstractAsyncContextManager[None]: ...
    def write_lock(self, installation_id: int) -> AbstractAsyncContextManager[None]: ...
    async def hold_writes(self, installation_id: int, until: float) -> None: ...
    async def writes_held_until(self, installation_id: int) -> float: ...


class Sealer:
    """AES-GCM under a key derived from the app's private key: every process of the app can open
    what another sealed; the database alone cannot. The installation id is the associated data,
    so a token copied to another installation's row (by someone who can write the database but
    not read tokens) does not open there."""

    def __init__(self, private_key: str) -> None:
        self._key = hashlib.sha256(b"reviewer installation tokens\0" + private_key.encode()).digest()

    def seal(self, token: str, installation_id: int) -> bytes:
        return seal_bytes(self._key, token.encode(), _context(installation_id))

    def unseal(self, sealed: bytes, installation_id: int) -> str | None:
        """The token, or None for what another key sealed (the app's key was rotated) or what was
        sealed for another installation."""
        try:
            return open_bytes(self._key, sealed, _context(installation_id)).decode()
        except (OpenError, UnicodeDecodeError):
            return None


def _context(installation_id: int) -> bytes:
    return f"installation:{installation_id}".encode()


async def wait_for_writes(coordination: Coordination, installation_id: int, clock=time.time, sleep=asyncio.sleep) -> None:
    """Wait out a `retry-after` another process (or this one) was given for the installation."""
    until = await coordination.writes_held_until(installation_id)
    if until > clock():
        await sleep(until - clock())
