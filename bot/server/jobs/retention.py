"""Deleting finished deliveries once they are old, so the store does not grow without end.

A delivery's row is what makes a redelivery of it a duplicate, so it is kept longer than GitHub
allows a redelivery (settings.MIN_RETENTION_DAYS). Deletion runs at start and then hourly, in
batches of a transaction each: the intake shares the writer, and one long delete would hold its
commits and the event loop back. Open deliveries (received, queued, running) are never deleted,
however old. The audit log's entries are kept as long as deliveries (`REVIEWER_DELIVERY_RETENTION_DAYS`)
and deleted in the same passes.
"""

from __future__ import annotations

import time

from bot.loops.pause import pause
from bot.server import logging as log
from bot.server.metrics import Metrics
from bot.store.model import AuditStore, DeliveryStore

logger = log.get("retention")
BATCH = 200  # rows a transaction: its statement runs on the event loop (about 1.3 ms measured)
EVERY = 3600.0  # seconds between two passes
DAY = 86400.0


async def prune_deliveries(store: DeliveryStore, days: int, metrics: Metrics) -> int:
    """Delete the finished deliveries last received more than `days` ago; returns how many."""
    before = time.time() - days * DAY
    total = 0
    while deleted := await store.prune(before, BATCH):
        total += deleted
        metrics.pruned.inc(deleted)
    if total:
        logger.info("deleted finished deliveries past the retention period",
                    extra={"count": total, "retention_days": days})
    return total


async def prune_audit(store: AuditStore, days: int) -> int:
    """Delete the audit log's entries recorded more than `days` ago; returns how many."""
    before = time.time() - days * DAY
    total = 0
    while deleted := await store.prune(before, BATCH):
        total += deleted
    if total:
        logger.info("deleted audit log entries past the retention period", extra={"count": total, "retention_days": days})
    return total


async def keep_pruning(store: DeliveryStore, days: int, metrics: Metrics, every: float = EVERY,
                       audit: AuditStore | None = None) -> None:
    """Prune now and every `every` seconds until cancelled; a failed pass is logged and retried."""
    while True:
        try:
            await prune_deliveries(store, days, metrics)
        except Exception:
            logger.exception("deleting old deliveries failed; trying again at the next pass")
        if audit is not None:
            try:
                await prune_audit(audit, days)
            except Exception:
                logger.exception("deleting old audit log entries failed; trying again at the next pass")
        await pause(every)
