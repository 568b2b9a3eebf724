"""The durable record of deliveries and their jobs, in SQLite, keyed by `X-GitHub-Delivery`
(the DeliveryStore of bot.store.model: the states and their moves are described there).

Bodies are stored as received, LZ4-compressed (bot.store.bodies): the WAL and the checkpoint each
copy every page, so fewer bytes are cheaper than the compression.

Two connections, each used by one task at a time, so no locks: the writer's statements run on the
event loop and its commits on the writer thread, one batch at a time (`database.write_transaction`);
the reader lives on its own thread. The statements the writer runs in a batch (the intake's
upsert, the end of jobs, the pruning) are bot/store/sqlite/writes.py's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from bot.store import console
from bot.store.bodies import unpack as _unpack
from bot.store.group_commit import GroupCommit
from bot.store.model import (
    Classification,
    Classified,
    Decide,
    DeliveryDecision,
    Incoming,
    Queued,
    Received,
    ReviewResult,
    Started,
    refused,
)
from bot.store.sqlite import database, installations
from bot.store.sqlite.writes import Op, finish_jobs, prune_deliveries, write_items

T = TypeVar("T")
logger = logging.getLogger("reviewer.store")

_STARTED = "RETURNING delivery_id, event, action, body, installation_id, repo, pr_number, head_sha, attempts, traceparent, queued_at"
_START = ("UPDATE deliveries SET state = 'running', attempts = attempts + 1, started_at = ? "
          "WHERE delivery_id = ? AND state = 'queued' " + _STARTED)
_RESTART = ("UPDATE deliveries SET attempts = attempts + 1, started_at = ? "
            "WHERE delivery_id = ? AND state = 'running' " + _STARTED)

class SQLiteDeliveryStore:
    """Writes go through one group commit (intake and job updates share the sync); reads run on
    a thread with their own connection, so under WAL they never wait for a commit's sync."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._writer_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        self._reader_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-reader")
        self._wconn: sqlite3.Connection | None = None
        self._rconn: sqlite3.Connection | None = None
        self._writer: GroupCommit[Incoming | Op, Any] = GroupCommit(self._write_batch)
        self.on_received: Callable[[], None] = lambda: None  # the dispatcher's wake-up; set before start
        self.unclassified = 0  # rows in state `received` (the dispatcher's backlog), for metrics
        self.intake_in_flight = 0  # webhook requests waiting for their commit (the dispatcher defers to them)

    async def _write_batch(self, items: list[Incoming | Op]) -> list[Any]:
        if self._wconn is None:
            raise RuntimeError(f"the delivery store {self.path} is not open")
        return await database.write_transaction(self._wconn, self._writer_thread,
                                                lambda conn: write_items(conn, items))

    async def _write(self, op: Op) -> Any:
        return await self._writer.submit(op)

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._rconn
        if conn is None:
            raise RuntimeError(f"the delivery store {self.path} is not open")
        return await asyncio.get_running_loop().run_in_executor(self._reader_thread, fn, conn)

    async def open(self) -> None:
        loop = asyncio.get_running_loop()

        def _open_writer() -> sqlite3.Connection:
            conn = database.connect(self.path, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=0")  # the lock is waited for on the loop: begin_immediate
            return conn
        self._wconn = await loop.run_in_executor(self._writer_thread, _open_writer)
        self._rconn = await loop.run_in_executor(
            self._reader_thread, lambda: database.connect(self.path, check_same_thread=False))
        self.unclassified = await self.count("received")
        self._writer.start()

    async def close(self) -> None:
        await self._writer.close()
        loop = asyncio.get_running_loop()
        for thread, conn in ((self._writer_thread, self._wconn), (self._reader_thread, self._rconn)):
            if conn is not None:
                await loop.run_in_executor(thread, conn.close)
            thread.shutdown(wait=True)
        self._wconn = self._rconn = None

    # --- intake -------------------------------------------------------------------------------

    async def accept(self, item: Incoming) -> bool:
        """Commit the delivery; False when it is a duplicate that changes nothing."""
        self.intake_in_flight += 1
        try:
            new = await self._writer.submit(item)
        finally:
            self.intake_in_flight -= 1
        if new:
            self.unclassified += 1
            self.on_received()  # committed: the dispatcher may read it
        return new

    # --- dispatcher ---------------------------------------------------------------------------

    async def received(self, limit: int) -> list[Received]:
        def query(conn: sqlite3.Connection) -> list[Received]:
            rows = conn.execute(
                "SELECT seq, delivery_id, event, body FROM deliveries WHERE state = 'received' "
                "ORDER BY seq LIMIT ?", (limit,)).fetchall()
            return [Received(seq, did, event, _unpack(body)) for seq, did, event, body in rows]
        return await self._read(query)

    async def classified(self, deliveries: list[Classified]) -> None:
        """Record (delivery id, new state, classification, error) for a batch: a queued row gets its
        `queued_at`, any other its `finished_at`."""
        now = time.time()
        rows = []
        for delivery_id, state, c, error in deliveries:
            c = c or Classification("ignored")
            queued = state == "queued"
            rows.append((state, c.action, c.installation_id, c.repo, c.pr_number, c.head_sha, c.key,
                         error, now if queued else None, None if queued else now, delivery_id))
        await self._write(lambda conn: conn.executemany(
            "UPDATE deliveries SET state = ?, action = ?, installation_id = ?, repo = ?, pr_number = ?, "
            "head_sha = ?, job_key = ?, error = ?, queued_at = ?, finished_at = ? "
            "WHERE delivery_id = ? AND state = 'received'", rows))
        self.unclassified = max(0, self.unclassified - len(deliveries))

    async def claim(self, limit: int, decide: Decide) -> list[DeliveryDecision]:
        """Decide and record up to `limit` received rows (one process owns the file's queue, so
        nobody else claims them meanwhile). The batch is written at once; if the store refuses
        it, each row is written alone, and a row refused alone is marked failed: one bad
        delivery never holds back the others."""
        decisions = [await decide(row) for row in await self.received(limit)]
        try:
            await self._record(decisions)
        except sqlite3.OperationalError:  # the file is locked or gone: try the batch again later
            raise
        except Exception:
            decisions = [await self._record_alone(d) for d in decisions]
        return decisions

    async def _record(self, decisions: list[DeliveryDecision]) -> None:
        for decision in decisions:
            if decision.installation_payload is not None:
                await self.record_installation(decision.event, decision.installation_payload)
        await self.classified([d.classified for d in decisions])

    async def _record_alone(self, decision: DeliveryDecision) -> DeliveryDecision:
        try:
            await self._record([decision])
            return decision
        except sqlite3.OperationalError:
            raise
        except Exception as exc:
            failed = refused(decision, exc)
            logger.warning("delivery failed: %s", failed.classified[3], extra={"delivery": decision.classified[0]})
            await self.classified([failed.classified])
            return failed

    async def recover(self, key: str | None = None) -> int:
        """Put jobs a crash interrupted back in the queue (of one key, or all), queued anew now;
        returns how many."""
        now = time.time()
        return await self._write(lambda conn: conn.execute(
            "UPDATE deliveries SET state = 'queued', queued_at = ?, started_at = NULL WHERE state = 'running' "
            "AND (? IS NULL OR job_key = ?)", (now, key, key)).rowcount)

    async def queued(self, key: str | None = None) -> list[Queued]:
        def query(conn: sqlite3.Connection) -> list[Queued]:
            rows = conn.execute(
                "SELECT seq, delivery_id, event, job_key, head_sha FROM deliveries "
                "WHERE state = 'queued' AND (? IS NULL OR job_key = ?) ORDER BY seq", (key, key)).fetchall()
            return [Queued(*row) for row in rows]
        return await self._read(query)

    async def open_keys(self) -> list[str]:
        def query(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute("SELECT DISTINCT job_key FROM deliveries WHERE state = 'queued' "
                                "AND job_key IS NOT NULL ORDER BY job_key").fetchall()
            return [row[0] for row in rows]
        return await self._read(query)

    async def count(self, state: str | None = None) -> int:
        def query(conn: sqlite3.Connection) -> int:
            if state is None:
                return conn.execute("SELECT count(*) FROM deliveries").fetchone()[0]
            return conn.execute("SELECT count(*) FROM deliveries WHERE state = ?", (state,)).fetchone()[0]
        return await self._read(query)

    # --- workers ------------------------------------------------------------------------------

    async def start(self, delivery_id: str) -> Started | None:
        """Mark a queued job running and read it, in one statement (None if it is not queued).

        The mark is committed before the job starts: the attempt number it records is how a job
        run again after a crash knows to take up the check run the interrupted attempt created
        (a mark lost to the crash would make the rerun a first attempt, and a second run).
        """
        return await self._started(_START, delivery_id)

    async def restart(self, delivery_id: str) -> Started | None:
        """A running job's next attempt, started in place of one the store went away under."""
        return await self._started(_RESTART, delivery_id)

    async def _started(self, statement: str, delivery_id: str) -> Started | None:
        rows = await self._write(lambda conn: conn.execute(statement, (time.time(), delivery_id)).fetchall())
        if not rows:
            return None
        row = rows[0]
        return Started(row[0], row[1], row[2], _unpack(row[3]), row[4], row[5], row[6], row[7], attempt=row[8],
                       traceparent=row[9], queued_at=row[10])

    async def finish(self, delivery_ids: list[str], state: str, error: str | None = None,
                     from_state: str = "running", wait: bool = True,
                     review: ReviewResult | None = None) -> None:
        """Record the end of jobs and what their review came to, and forget their journals in the
        same commit. `wait=False` leaves the commit to the next batch: a job whose `done` is lost to
        a crash runs again, as one cut off in the handler would (at least once). A failure is waited
        for, so that a redelivery right after it is not taken for a duplicate."""
        written = self._writer.post(lambda conn: finish_jobs(conn, delivery_ids, state, error, from_state, review))
        if wait:
            await written
        else:
            written.add_done_callback(_log_failure)

    async def delivery(self, delivery_id: str) -> dict[str, Any] | None:
        """One delivery's record, body and headers decoded (for inspection and tests)."""
        def query(conn: sqlite3.Connection) -> dict[str, Any] | None:
            cursor = conn.execute("SELECT * FROM deliveries WHERE delivery_id = ?", (delivery_id,))
            row = cursor.fetchone()
            if row is None:
                return None
            record = dict(zip([c[0] for c in cursor.description], row, strict=False))
            record["body"] = _unpack(record["body"])
            record["headers"] = json.loads(record["headers"])
            return record
        return await self._read(query)

    async def prune(self, before: float, limit: int) -> int:
        """Delete up to `limit` finished deliveries last received before `before` (epoch seconds);
        returns how many. Open ones (received, queued, running) stay whatever their age. Their
        timeline rows go in the same transaction."""
        return await self._write(lambda conn: prune_deliveries(conn, before, limit))

    async def ping(self) -> None:
        await self._read(lambda conn: conn.execute("SELECT 1").fetchone())

    # --- installations ------------------------------------------------------------------------

    async def record_installation(self, event: str, payload: dict[str, Any]) -> None:
        """Keep which installations exist and the repositories each may reach."""
        await self._write(lambda conn: installations.record(conn, event, payload))

    async def installation(self, installation_id: int) -> dict[str, Any] | None:
        return await self._read(lambda conn: installations.get(conn, installation_id))

    async def installation_for(self, full_name: str) -> int | None:
        """The installation that reaches `owner/name`, as the installation events said; None when
        none recorded does. The events are not the whole truth (an installation on every
        repository of an account is not told of a repository created later), so a caller that
        gets None asks GitHub."""
        return await self._read(lambda conn: installations.reaching(conn, full_name))

    async def installations(self) -> list[dict[str, Any]]:
        """Every installation not deleted, by id, with the repositories it reaches."""
        return await self._read(installations.every)

    async def last_reviews(self) -> list[dict[str, Any]]:
        """Per repository, the newest delivery whose job recorded a review's outcome."""
        def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            cursor = conn.execute(console.LAST_REVIEWS)
            names = [c[0] for c in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        return await self._read(query)

    # --- the admin console (bot.store.console: the SQL both backends share) ---------------------

    async def recent(self, *, before_seq: int | None = None, limit: int = 200, repo: str | None = None,
                     event: str | None = None, state: str | None = None,
                     since: float | None = None, pr_number: int | None = None) -> list[dict[str, Any]]:
        """Deliveries newest first, without bodies: one page of the console's list."""
        sql, args = console.recent_query("?", before_seq=before_seq, limit=limit, repo=repo, event=event,
                                         state=state, since=since, pr_number=pr_number)

        def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            cursor = conn.execute(sql, args)
            names = [c[0] for c in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        return await self._read(query)

    async def shown_states_since(self, since: float) -> dict[str, int]:
        """Deliveries received since `since` (epoch seconds), counted by state as shown
        (bot.store.console.shown_state)."""
        statement = console.shown_states_statement("?")
        return await self._read(lambda conn: dict(conn.execute(statement, (since,)).fetchall()))

    async def redeliver(self, delivery_id: str) -> bool:
        """Put a failed delivery (its job or its review failed) back to `received`, as GitHub's
        redelivery of it would, and wake the dispatcher as the intake does; False when it is not
        failed (nothing runs twice)."""
        changed = await self._write(lambda conn: conn.execute(console.redeliver_statement("?"), (delivery_id,)))
        if changed:
            self.unclassified += 1
            self.on_received()
        return bool(changed)

    # --- for the stores that share this file's writer (bot.store.sqlite.timeline) --------------

    async def write_op(self, op: Op, wait: bool = True) -> Any:
        """`op(conn)` in the next group commit: one statement (its cursor's rowcount is returned).
        `wait=False` returns at once, leaving a failure to the log, as `finish` does."""
        written = self._writer.post(op)
        if not wait:
            written.add_done_callback(_log_failure)
            return None
        return await written

    async def read_op(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._read(fn)


def _log_failure(future: asyncio.Future) -> None:
    error = None if future.cancelled() else future.exception()
    if error is not None:
        logger.error("a store write failed", exc_info=error)
