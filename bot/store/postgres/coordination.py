"""What GitHub clients in many processes share, in PostgreSQL (bot.github.coordination's protocol):
sealed installation tokens in a table, and advisory locks for "one token fetch" and "one write" per
installation. A lock is held on one pooled connection for the span of the fetch or the write; a
process that dies loses its connection and so its locks, and nobody waits for a dead holder.

While PostgreSQL is unreachable (a restart), coordination falls back to this process alone
(`LocalCoordination`): a job in flight goes on calling GitHub rather than failing on a store it
does not need for that, at the cost of not being ordered with other processes for that moment.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator

import psycopg

from bot.store.coordination import LocalCoordination
from bot.store.model import StoreUnavailable
from bot.store.postgres.database import Database

logger = logging.getLogger("reviewer.store")

_TOKEN, _WRITE = 1, 2  # lock namespaces


def _key(kind: int, installation_id: int) -> int:
    """One bigint advisory key per (kind, installation), in PostgreSQL's signed 64-bit range."""
    return (kind << 56) ^ (installation_id & ((1 << 56) - 1))


class PostgresCoordination:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.local = LocalCoordination()

    async def load_token(self, installation_id: int) -> tuple[bytes, float] | None:
        with _alone("read a shared token"):
            return await self._load_token(installation_id)
        return None

    async def _load_token(self, installation_id: int) -> tuple[bytes, float] | None:
        rows = await self.db.fetch("SELECT sealed, expires_at FROM installation_tokens WHERE installation_id = %s",
                                   (installation_id,))
        return (bytes(rows[0][0]), float(rows[0][1])) if rows else None

    async def save_token(self, installation_id: int, sealed: bytes, expires_at: float) -> None:
        with _alone("share a token"):
            await self._save_token(installation_id, sealed, expires_at)

    async def _save_token(self, installation_id: int, sealed: bytes, expires_at: float) -> None:
        await self.db.execute(
            "INSERT INTO installation_tokens (installation_id, sealed, expires_at) VALUES (%s, %s, %s) "
            "ON CONFLICT (installation_id) DO UPDATE SET sealed = excluded.sealed, expires_at = excluded.expires_at",
            (installation_id, sealed, expires_at))

    async def drop_token(self, installation_id: int, sealed: bytes | None) -> None:
        with _alone("drop a shared token"):
            await self._drop_token(installation_id, sealed)

    async def _drop_token(self, installation_id: int, sealed: bytes | None) -> None:
        await self.db.execute("DELETE FROM installation_tokens WHERE installation_id = %s "
                              "AND (%s::bytea IS NULL OR sealed = %s)", (installation_id, sealed, sealed))

    def token_lock(self, installation_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        return self._locked(_key(_TOKEN, installation_id), self.local.token_lock(installation_id))

    def write_lock(self, installation_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        return self._locked(_key(_WRITE, installation_id), self.local.write_lock(installation_id))

    @contextlib.asynccontextmanager
    async def _locked(self, key: int, local: contextlib.AbstractAsyncContextManager[None]) -> AsyncIterator[None]:
        """This process's own lock first (one connection a holder, not one a waiter), then the
        advisory lock; without PostgreSQL, the process's lock alone."""
        async with local, contextlib.AsyncExitStack() as held:
            conn: psycopg.AsyncConnection | None = None
            try:
                conn = await held.enter_async_context(self.db.connection())
                await conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            except (StoreUnavailable, psycopg.Error):
                logger.warning("PostgreSQL is unreachable: GitHub calls are ordered in this process only")
                conn = None
            try:
                yield
            finally:
                if conn is not None:
                    with contextlib.suppress(psycopg.Error):  # a lost connection released the lock already
                        await conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    async def hold_writes(self, installation_id: int, until: float) -> None:
        await self.local.hold_writes(installation_id, until)
        with _alone("share a retry-after"):
            await self._hold_writes(installation_id, until)

    async def _hold_writes(self, installation_id: int, until: float) -> None:
        await self.db.execute(
            "INSERT INTO github_holds (installation_id, until) VALUES (%s, %s) ON CONFLICT (installation_id) "
            "DO UPDATE SET until = greatest(github_holds.until, excluded.until)", (installation_id, until))

    async def writes_held_until(self, installation_id: int) -> float:
        local = await self.local.writes_held_until(installation_id)
        with _alone("read a shared retry-after"):
            return max(local, await self._writes_held_until(installation_id))
        return local

    async def _writes_held_until(self, installation_id: int) -> float:
        rows = await self.db.fetch("SELECT until FROM github_holds WHERE installation_id = %s AND until > %s",
                                   (installation_id, time.time()))
        return float(rows[0][0]) if rows else 0.0


@contextlib.contextmanager
def _alone(what: str):
    """Swallow StoreUnavailable (the caller then goes on as if alone), saying what was skipped."""
    try:
        yield
    except StoreUnavailable:
        logger.warning("PostgreSQL is unreachable: could not %s; going on in this process alone", what)
