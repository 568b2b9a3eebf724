"""What the dispatcher makes of one received delivery: parse, classify, log and count it.

Shared by both queues (the in-process one and the PostgreSQL one): the same deliveries give the
same states, logs and metrics whichever runs them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from bot.events.jobs import Classification, InvalidPayload, classify, parse_payload
from bot.server import logging as log
from bot.server.metrics import Metrics
from bot.store.model import DeliveryDecision, DeliveryStore, Received

logger = log.get("queue")
INTAKE_PAUSE = 0.02  # seconds between two parsed bodies while webhook requests are waiting
# Bytes past which a body is parsed on a thread: GitHub sends up to 25 MB, and parsing that much
# on the event loop would hold every webhook request (and the 202 GitHub waits 10 s for) meanwhile.
BIG_BODY = 1024 * 1024


async def decide_in_turn(row: Received, metrics: Metrics, store: DeliveryStore) -> DeliveryDecision:
    """`decide`, then a turn for the event loop: a body may take a while to parse, and a batch
    holds many. Intake first: GitHub counts a delivery failed after 10 s without an answer, while a
    job may wait. During a burst (requests waiting for their commit) one body is parsed per
    INTAKE_PAUSE (50 a second), so the dispatcher still advances; after it, at full speed. Workers'
    heartbeats run on the same loop, and are never held up for more than one body (a big one is
    parsed on a thread)."""
    read = await asyncio.to_thread(_read, row) if len(row.body) > BIG_BODY else _read(row)
    decision = decide(row, metrics, read)
    await asyncio.sleep(INTAKE_PAUSE if store.intake_in_flight else 0)
    return decision


_Read = tuple[dict[str, Any], Classification] | Exception


def _read(row: Received) -> _Read:
    """The payload and what it means, or why it could not be read (pure: safe on a thread; the
    logs and metrics of `decide` stay on the event loop)."""
    try:
        payload = parse_payload(row.body)
        return payload, classify(row.event, payload)
    except Exception as exc:  # the caller tells InvalidPayload from a bug
        return exc


def decide(row: Received, metrics: Metrics, read: _Read) -> DeliveryDecision:
    """The delivery's new state (queued, ignored, done for installation events
    that add or remove no repository, failed), from what `_read` made of its body."""
    fields: dict[str, Any] = {"delivery": row.delivery_id, "event": row.event}
    try:
        if isinstance(read, Exception):
            raise read
        payload, c = read
    except InvalidPayload as exc:  # signed by GitHub's secret but unusable: retrying cannot help
        logger.warning("delivery failed: %s", exc, extra=fields)
        metrics.delivery(row.event, "invalid")
        return DeliveryDecision(row.event, (row.delivery_id, "failed", None, str(exc)))
    except Exception as exc:  # a bug here must not wedge the dispatcher on this row
        logger.exception("delivery could not be classified", extra=fields)
        metrics.delivery(row.event, "invalid")
        return DeliveryDecision(row.event, (row.delivery_id, "failed", None, log.error_text(exc)))
    fields.update(log.fields(action=c.action, repo=c.repo, pr=c.pr_number, installation=c.installation_id))
    if c.kind == "ignored":
        logger.info("delivery ignored: %s", c.reason, extra=fields)
        metrics.delivery(row.event, "ignored")
        return DeliveryDecision(row.event, (row.delivery_id, "ignored", c, None))
    if c.kind == "installation":  # recorded; a job when repositories came or went (their indexes)
        logger.info("installation recorded", extra=fields)
        metrics.delivery(row.event, "installation")
        return DeliveryDecision(row.event, (row.delivery_id, "queued" if c.key else "done", c, None), payload)
    logger.info("delivery queued", extra=fields)
    metrics.delivery(row.event, "queued")
    return DeliveryDecision(row.event, (row.delivery_id, "queued", c, None))
