"""Deliveries and installations in PostgreSQL: the DeliveryStore of bot.store.model.

The intake goes through a group commit as on SQLite: the deliveries that arrived while the previous
batch was committing are written in one multi-row statement and one commit (PostgreSQL's
`synchronous_commit` makes it durable before the 202). Other writes are single statements on a
pooled connection: PostgreSQL's row locks, not one writer, keep them apart.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from bot.store import console
from bot.store.bodies import pack, unpack
from bot.store.group_commit import GroupCommit
from bot.store.installs import change_of, repositories_after
from bot.store.model import (
    FINISHED_STATES,
    Classification,
    Classified,
    Decide,
    DeliveryDecision,
    Incoming,
    Queued,
    Received,
    ReviewResult,
    Started,
    StoreUnavailable,
    refused,
)
from bot.store.postgres.database import Database, dropped

logger = logging.getLogger("reviewer.store")

_STARTED = ("RETURNING delivery_id, event, action, body, installation_id, repo, pr_number, head_sha, attempts, traceparent, queued_at")
_START = ("UPDATE deliveries SET state = 'running', attempts = attempts + 1, started_at = %s "
          "WHERE delivery_id = %s AND state = 'queued' " + _STARTED)
_RESTART = ("UPDATE deliveries SET attempts = attempts + 1, started_at = %s "
            "WHERE delivery_id = %s AND state = 'running' " + _STARTED)

# The batch as six arrays: one statement text whatever the batch's size (psycopg parses a text
# once and keeps it; a VALUES list of every size was parsed again per batch), bodies in binary.
_UPSERT = """
INSERT INTO deliveries (delivery_id, event, headers, body, received_at, traceparent, state)
SELECT delivery_id, event, headers, body, received_at, traceparent, 'received'
FROM unnest(%s::text[], %s::text[], %s::text[], %b::bytea[], %s::float8[], %s::text[])
    AS batch(delivery_id, event, headers, body, received_at, traceparent)
"""
# A redelivery of a delivery whose job (or review) failed is done again (bot.store.console); any
# other is a duplicate.
_ON_CONFLICT = f"""
ON CONFLICT (delivery_id) DO UPDATE SET
    event = excluded.event, headers = excluded.headers, body = excluded.body, traceparent = excluded.traceparent,
    received_at = excluded.received_at, received_count = deliveries.received_count + 1, {console.RESET}
WHERE {console.failed_condition("deliveries.")}
RETURNING delivery_id
"""


class PostgresDeliveryStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._writer: GroupCommit[Incoming, bool] = GroupCommit(self._accept_batch)
        self.on_received: Callable[[], None] = lambda: None
        self.unclassified = 0
        self.intake_in_flight = 0

    async def open(self) -> None:
        self.unclassified = await self.count("received")
        self._writer.start()

    async def close(self) -> None:
        await self._writer.close()

    async def _accept_batch(self, items: list[Incoming]) -> list[bool]:
        """One statement for the batch, committed on its own (autocommit: no BEGIN and COMMIT
        round trips around it); a delivery id twice in it is taken once (PostgreSQL refuses to
        update one row twice in a statement), the second a duplicate."""
        first: dict[str, Incoming] = {}
        for item in items:
            first.setdefault(item.delivery_id, item)
        batch = list(first.values())
        columns = ([i.delivery_id for i in batch], [i.event for i in batch], [json.dumps(i.headers) for i in batch],
                   [pack(i.body) for i in batch], [i.received_at for i in batch], [i.traceparent for i in batch])
        try:
            stored = await self.db.fetch(_UPSERT + _ON_CONFLICT, columns)
        except StoreUnavailable as exc:
            if not dropped(exc.__cause__):
                raise  # no connection to be had in time: answering 503 now beats waiting again
            # A connection the server dropped (a restart) since its last use: once more, on one the
            # pool checks first. Safe to repeat: a row the first try did store comes back a duplicate,
            # still `received` for all that (its commit's answer was what got lost), so the dispatcher
            # is woken whatever this try says.
            stored = await self.db.fetch(_UPSERT + _ON_CONFLICT, columns)
            self.on_received()
        taken = {row[0] for row in stored}
        results, seen = [], set()
        for item in items:
            results.append(item.delivery_id in taken and item.delivery_id not in seen)
            seen.add(item.delivery_id)
        return results

    async def accept(self, item: Incoming) -> bool:
        """Commit the delivery; False when it is a duplicate that changes nothing."""
        self.intake_in_flight += 1
        try:
            new = await self._writer.submit(item)
        finally:
            self.intake_in_flight -= 1
        if new:
            self._taken_up()
        return new

    def _taken_up(self) -> None:
        """A row is `received` again or anew, committed: this process's dispatcher claims it."""
        self.unclassified += 1
        self.on_received()

    async def received(self, limit: int) -> list[Received]:
        rows = await self.db.fetch(
            "SELECT seq, delivery_id, event, body FROM deliveries WHERE state = 'received' ORDER BY seq LIMIT %s",
            (limit,))
        return [Received(seq, did, event, unpack(body)) for seq, did, event, body in rows]

    async def classified(self, deliveries: list[Classified]) -> None:
        async with self.db.transaction() as conn:
            await _record_classified(conn, deliveries)
        self.unclassified = max(0, self.unclassified - len(deliveries))

    async def claim(self, limit: int, decide: Decide) -> list[DeliveryDecision]:
        """Decide received rows outside any transaction (parsing a body takes time: `decide` may
        yield to the event loop between bodies), then, in one short transaction, lock those still
        `received` as read (SKIP LOCKED: two dispatchers never record the same row; one that dies
        mid-way leaves them `received`) and record them together in one savepoint; if the database
        refuses that, each row in its own: a row refused alone is marked failed and the others are
        recorded."""
        rows = await self.db.fetch(
            "SELECT seq, delivery_id, event, body, received_count FROM deliveries WHERE state = 'received' "
            "ORDER BY seq LIMIT %s", (limit,))
        seen = {did: count for _, did, _, _, count in rows}
        decisions = [await decide(Received(seq, did, event, unpack(body))) for seq, did, event, body, _ in rows]
        if not decisions:
            return []
        async with self.db.transaction() as conn:
            cursor = await conn.execute(
                "SELECT delivery_id, received_count FROM deliveries WHERE delivery_id = ANY(%s) "
                "AND state = 'received' ORDER BY seq FOR UPDATE SKIP LOCKED", (list(seen),))
            mine = {did for did, count in await cursor.fetchall() if seen[did] == count}
            recorded = await _record_batch(conn, [d for d in decisions if d.classified[0] in mine])
        self.unclassified = max(0, self.unclassified - len(recorded))
        return recorded

    async def recover(self, key: str | None = None) -> int:
        """Put jobs a dead worker left back in the queue (of one key, or all), queued anew now."""
        return await self.db.execute(
            "UPDATE deliveries SET state = 'queued', queued_at = %s, started_at = NULL WHERE state = 'running' "
            "AND (%s::text IS NULL OR job_key = %s)", (time.time(), key, key))

    async def queued(self, key: str | None = None) -> list[Queued]:
        rows = await self.db.fetch(
            "SELECT seq, delivery_id, event, job_key, head_sha FROM deliveries WHERE state = 'queued' "
            "AND (%s::text IS NULL OR job_key = %s) ORDER BY seq", (key, key))
        return [Queued(*row) for row in rows]

    async def open_keys(self) -> list[str]:
        rows = await self.db.fetch("SELECT DISTINCT job_key FROM deliveries WHERE state = 'queued' "
                                   "AND job_key IS NOT NULL ORDER BY job_key")
        return [row[0] for row in rows]

    async def count(self, state: str | None = None) -> int:
        if state is None:
            rows = await self.db.fetch("SELECT count(*) FROM deliveries")
        else:
            rows = await self.db.fetch("SELECT count(*) FROM deliveries WHERE state = %s", (state,))
        return int(rows[0][0])

    async def start(self, delivery_id: str) -> Started | None:
        """Mark a queued job running and read it, in one committed statement (None if not queued)."""
        return await self._started(_START, delivery_id)

    async def restart(self, delivery_id: str) -> Started | None:
        """A running job's next attempt, started in place of one the store went away under."""
        return await self._started(_RESTART, delivery_id)

    async def _started(self, statement: str, delivery_id: str) -> Started | None:
        rows = await self.db.fetch(statement, (time.time(), delivery_id))
        if not rows:
            return None
        row = rows[0]
        return Started(row[0], row[1], row[2], unpack(row[3]), row[4], row[5], row[6], row[7], attempt=row[8],
                       traceparent=row[9], queued_at=row[10])

    async def finish(self, delivery_ids: list[str], state: str, error: str | None = None,
                     from_state: str = "running", wait: bool = True,
                     review: ReviewResult | None = None) -> None:
        """Record the end of jobs and what their review came to, and forget their journals in the
        same statement. Always waited for, `wait` or not: there is no batch to join here, and a
        caller must hear that the store was away (StoreUnavailable) to try again."""
        outcome, reason = (review.kind, review.reason) if review is not None else (None, None)
        await self.db.execute(
            "WITH ended AS (UPDATE deliveries SET state = %s, error = %s, finished_at = %s, review_outcome = %s, "
            "review_reason = %s WHERE delivery_id = ANY(%s) AND state = %s RETURNING delivery_id) "
            "DELETE FROM job_journal WHERE delivery_id IN (SELECT delivery_id FROM ended)",
            (state, error, time.time(), outcome, reason, delivery_ids, from_state))

    async def delivery(self, delivery_id: str) -> dict[str, Any] | None:
        async with self.db.connection() as conn:
            cursor = await conn.execute("SELECT * FROM deliveries WHERE delivery_id = %s", (delivery_id,))
            row = await cursor.fetchone()
            if row is None:
                return None
            record = dict(zip([c.name for c in cursor.description or []], row, strict=False))
        record["body"] = unpack(record["body"])
        record["headers"] = json.loads(record["headers"])
        return record

    async def prune(self, before: float, limit: int) -> int:
        """Finished deliveries received before `before`, and their timeline rows, in one statement."""
        rows = await self.db.fetch(
            "WITH gone AS (DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries WHERE received_at < %s "
            "AND state = ANY(%s) LIMIT %s) RETURNING delivery_id), "
            "timeline AS (DELETE FROM delivery_timeline WHERE delivery_id IN (SELECT delivery_id FROM gone)) "
            "SELECT count(*) FROM gone", (before, list(FINISHED_STATES), limit))
        return int(rows[0][0])

    async def ping(self) -> None:
        await self.db.fetch("SELECT 1")

    # --- installations ------------------------------------------------------------------------

    async def record_installation(self, event: str, payload: dict[str, Any]) -> None:
        async with self.db.transaction() as conn:
            await _record_installation(conn, event, payload)

    async def installation(self, installation_id: int) -> dict[str, Any] | None:
        rows = await self.db.fetch(
            "SELECT id, account, last_action, deleted, repositories FROM installations WHERE id = %s",
            (installation_id,))
        if not rows:
            return None
        row = rows[0]
        return {"id": row[0], "account": row[1], "last_action": row[2], "deleted": bool(row[3]),
                "repositories": list(row[4])}

    async def installation_for(self, full_name: str) -> int | None:
        rows = await self.db.fetch(
            "SELECT i.id FROM installations i, jsonb_array_elements_text(i.repositories) AS repo(name) "
            "WHERE NOT i.deleted AND lower(repo.name) = lower(%s) ORDER BY i.updated_at DESC LIMIT 1",
            (full_name,))
        return int(rows[0][0]) if rows else None

    async def installations(self) -> list[dict[str, Any]]:
        """Every installation not deleted, by id, with the repositories it reaches."""
        rows = await self.db.fetch("SELECT id, account, last_action, deleted, repositories FROM installations "
                                   "WHERE NOT deleted ORDER BY id")
        return [{"id": row[0], "account": row[1], "last_action": row[2], "deleted": bool(row[3]),
                 "repositories": list(row[4])} for row in rows]

    async def last_reviews(self) -> list[dict[str, Any]]:
        """Per repository, the newest delivery whose job recorded a review's outcome."""
        async with self.db.connection() as conn:
            cursor = await conn.execute(console.LAST_REVIEWS)
            names = [c.name for c in cursor.description or []]
            return [dict(zip(names, row, strict=True)) for row in await cursor.fetchall()]

    # --- the admin console (bot.store.console: the SQL both backends share) ---------------------

    async def recent(self, *, before_seq: int | None = None, limit: int = 200, repo: str | None = None,
                     event: str | None = None, state: str | None = None,
                     since: float | None = None, pr_number: int | None = None) -> list[dict[str, Any]]:
        sql, args = console.recent_query("%s", before_seq=before_seq, limit=limit, repo=repo, event=event,
                                         state=state, since=since, pr_number=pr_number)
        async with self.db.connection() as conn:
            cursor = await conn.execute(sql, args)
            names = [c.name for c in cursor.description or []]
            return [dict(zip(names, row, strict=True)) for row in await cursor.fetchall()]

    async def shown_states_since(self, since: float) -> dict[str, int]:
        rows = await self.db.fetch(console.shown_states_statement("%s"), (since,))
        return {state: int(count) for state, count in rows}

    async def redeliver(self, delivery_id: str) -> bool:
        """The webhook's redelivery of a failed row (its job or its review), without the webhook: the row is `received`
        again, committed, and this process's dispatcher is woken to claim it, as after an intake
        (any web process's dispatcher would take it up on its next pass)."""
        if not await self.db.execute(console.redeliver_statement("%s"), (delivery_id,)):
            return False
        self._taken_up()
        return True


async def _record_classified(conn: psycopg.AsyncConnection, deliveries: list[Classified]) -> None:
    """Each classified delivery on its row: a queued row gets its `queued_at`, any other its `finished_at`."""
    now = time.time()
    rows = []
    for delivery_id, state, c, error in deliveries:
        c = c or Classification("ignored")
        queued = state == "queued"
        rows.append((state, c.action, c.installation_id, c.repo, c.pr_number, c.head_sha, c.key,
                     error, now if queued else None, None if queued else now, delivery_id))
    async with conn.cursor() as cursor:
        await cursor.executemany(
            "UPDATE deliveries SET state = %s, action = %s, installation_id = %s, repo = %s, pr_number = %s, "
            "head_sha = %s, job_key = %s, error = %s, queued_at = %s, finished_at = %s WHERE delivery_id = %s "
            "AND state = 'received'", rows)


async def _record_batch(conn: psycopg.AsyncConnection, decisions: list[DeliveryDecision]) -> list[DeliveryDecision]:
    """The batch in one savepoint (one round trip for its rows); only when the database
    refuses it are the rows written one by one, so that the bad one fails alone."""
    try:
        async with conn.transaction():
            await _record_decisions(conn, decisions)
        return decisions
    except psycopg.OperationalError:  # the connection is gone: nothing of the batch is recorded
        raise
    except psycopg.Error:
        return [await _record_alone(conn, d) for d in decisions]


async def _record_decisions(conn: psycopg.AsyncConnection, decisions: list[DeliveryDecision]) -> None:
    for decision in decisions:
        if decision.installation_payload is not None:
            await _record_installation(conn, decision.event, decision.installation_payload)
    await _record_classified(conn, [d.classified for d in decisions])


async def _record_alone(conn: psycopg.AsyncConnection, decision: DeliveryDecision) -> DeliveryDecision:
    """Record one decision in a savepoint; if the database refuses it (a value no column can
    hold), the row is marked failed with the reason, and the batch goes on."""
    try:
        async with conn.transaction():
            await _record_decisions(conn, [decision])
        return decision
    except psycopg.OperationalError:  # the connection is gone: nothing of the batch is recorded
        raise
    except psycopg.Error as exc:
        failed = refused(decision, exc)
        logger.warning("delivery failed: %s", failed.classified[3], extra={"delivery": decision.classified[0]})
        async with conn.transaction():
            await _record_classified(conn, [failed.classified])
        return failed


async def _record_installation(conn: psycopg.AsyncConnection, event: str, payload: dict[str, Any]) -> None:
    change = change_of(event, payload)
    cursor = await conn.execute("SELECT repositories FROM installations WHERE id = %s FOR UPDATE",
                                (change.installation_id,))
    row = await cursor.fetchone()
    repos = repositories_after(event, payload, set(row[0]) if row else set())
    await conn.execute(
        "INSERT INTO installations (id, account, last_action, deleted, repositories, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
        "account = coalesce(excluded.account, installations.account), last_action = excluded.last_action, "
        "deleted = excluded.deleted, repositories = excluded.repositories, updated_at = excluded.updated_at",
        (change.installation_id, change.account, change.last_action, change.deleted, Jsonb(repos), time.time()))
