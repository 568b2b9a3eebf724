"""The statements the SQLite delivery store's writer runs inside a group commit's transaction
(bot/store/sqlite/deliveries.py): a batch of received deliveries in one upsert, then each op; the
end of jobs with their journals, and the pruning of old deliveries with their timelines, each
under a savepoint so that an op that raises fails alone and the rest of its batch commits."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from bot.store import console
from bot.store.bodies import pack as _pack
from bot.store.model import Incoming, ReviewResult

_UPSERT = "INSERT INTO deliveries (delivery_id, event, headers, body, received_at, traceparent, state) VALUES "
# A redelivery of a delivery whose job (or review) failed is done again (bot.store.console); any
# other is a duplicate.
_ON_CONFLICT = f"""
ON CONFLICT (delivery_id) DO UPDATE SET
    event = excluded.event, headers = excluded.headers, body = excluded.body, traceparent = excluded.traceparent,
    received_at = excluded.received_at, received_count = received_count + 1, {console.RESET}
WHERE {console.failed_condition("deliveries.")}
RETURNING delivery_id
"""

Op = Callable[[sqlite3.Connection], Any]


def write_items(conn: sqlite3.Connection, items: list[Incoming | Op]) -> list[Any]:
    """A batch's statements, inside its transaction: deliveries in one statement, then each op.

    An op that raises fails alone (its caller gets the exception); ops are single statements, so
    nothing half-done stays. Their cursors are closed here, before the commit runs on the writer
    thread, so that no statement of this connection is touched on the loop meanwhile.
    """
    results: list[Any] = [None] * len(items)
    accepts = [(i, item) for i, item in enumerate(items) if isinstance(item, Incoming)]
    for (i, _), result in zip(accepts, accept_many(conn, [item for _, item in accepts]), strict=False):
        results[i] = result
    for i, op in enumerate(items):
        if not isinstance(op, Incoming):
            try:
                results[i] = _plain(op(conn))
            except Exception as exc:
                results[i] = exc
    return results


def _plain(result: Any) -> Any:
    if isinstance(result, sqlite3.Cursor):
        count = result.rowcount
        result.close()
        return count
    return result


def accept_many(conn: sqlite3.Connection, items: list[Incoming]) -> list[bool]:
    """New deliveries inserted and failed ones redone, in one statement; True for each that will
    be done. One statement, not a look-up then an insert and an update per redelivery: it runs on
    the event loop, where every statement is CPU taken from the requests."""
    if not items:
        return []
    rows = [(item.delivery_id, item.event, json.dumps(item.headers), _pack(item.body), item.received_at,
             item.traceparent) for item in items]
    taken = {row[0] for row in conn.execute(_UPSERT + ",".join(["(?, ?, ?, ?, ?, ?, 'received')"] * len(rows)) + _ON_CONFLICT,
                                            [value for row in rows for value in row])}
    results, seen = [], set()
    for item in items:  # a delivery id twice in one batch: the first is taken, the second is a duplicate
        results.append(item.delivery_id in taken and item.delivery_id not in seen)
        seen.add(item.delivery_id)
    return results


def finish_jobs(conn: sqlite3.Connection, delivery_ids: list[str], state: str, error: str | None,
            from_state: str, review: ReviewResult | None = None) -> int:
    """The end of jobs and the deletion of their journals, both or neither (a savepoint: an op
    that raises fails alone, and the rest of its batch commits)."""
    conn.execute("SAVEPOINT finish").close()
    try:
        outcome, reason = (review.kind, review.reason) if review is not None else (None, None)
        ended = [(row[0],) for d in delivery_ids for row in conn.execute(
            "UPDATE deliveries SET state = ?, error = ?, finished_at = ?, review_outcome = ?, review_reason = ? "
            "WHERE delivery_id = ? AND state = ? RETURNING delivery_id",
            (state, error, time.time(), outcome, reason, d, from_state)).fetchall()]
        conn.executemany("DELETE FROM job_journal WHERE delivery_id = ?", ended).close()
    except BaseException:
        conn.execute("ROLLBACK TO finish").close()
        conn.execute("RELEASE finish").close()
        raise
    conn.execute("RELEASE finish").close()
    return len(ended)


def prune_deliveries(conn: sqlite3.Connection, before: float, limit: int) -> int:
    """Deliveries and their timeline rows, under a savepoint: both go or neither (an op that
    raises fails alone, and the rest of its batch commits)."""
    conn.execute("SAVEPOINT prune").close()
    try:
        gone = [(row[0],) for row in conn.execute(
            "DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries WHERE received_at < ? "
            "AND state IN ('done', 'ignored', 'failed', 'superseded') LIMIT ?) RETURNING delivery_id",
            (before, limit)).fetchall()]
        conn.executemany("DELETE FROM delivery_timeline WHERE delivery_id = ?", gone).close()
    except BaseException:
        conn.execute("ROLLBACK TO prune").close()
        conn.execute("RELEASE prune").close()
        raise
    conn.execute("RELEASE prune").close()
    return len(gone)
