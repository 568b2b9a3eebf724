"""Coordination for one process alone: asyncio locks, nothing stored.

The default of the GitHub client (bot/github/coordination.py names the interface, `Coordination`)
when the server runs on SQLite, and what the PostgreSQL coordination (bot/store/postgres/
coordination.py) falls back to while PostgreSQL cannot be reached. It lives in the store layer so
that the PostgreSQL one need not import the GitHub package above it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager


class LocalCoordination:
    """One process: asyncio locks, nothing stored (the token cache in AppAuth is enough)."""

    def __init__(self) -> None:
        self._token_locks: dict[int, asyncio.Lock] = {}
        self._write_locks: dict[int, asyncio.Lock] = {}
        self._held: dict[int, float] = {}

    async def load_token(self, installation_id: int) -> tuple[bytes, float] | None:
        return None

    async def save_token(self, installation_id: int, sealed: bytes, expires_at: float) -> None:
        return None

    async def drop_token(self, installation_id: int, sealed: bytes | None) -> None:
        return None

    def token_lock(self, installation_id: int) -> AbstractAsyncContextManager[None]:
        return _locked(self._token_locks.setdefault(installation_id, asyncio.Lock()))

    def write_lock(self, installation_id: int) -> AbstractAsyncContextManager[None]:
        return _locked(self._write_locks.setdefault(installation_id, asyncio.Lock()))

    async def hold_writes(self, installation_id: int, until: float) -> None:
        self._held[installation_id] = max(until, self._held.get(installation_id, 0.0))

    async def writes_held_until(self, installation_id: int) -> float:
        return self._held.get(installation_id, 0.0)


@contextlib.asynccontextmanager
async def _locked(lock: asyncio.Lock) -> AsyncIterator[None]:
    async with lock:
        yield
