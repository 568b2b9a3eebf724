"""Rows the store's suites write: a delivery received, classified as a job, queued, finished with
a review's result, and a timeline attempt (tests/store/test_store_conformance.py and
test_store_migrations.py)."""

from __future__ import annotations

import time

from bot.events.jobs import Classification, ReviewResult
from bot.store.model import Incoming, Storage, TimelineEntry


def incoming(delivery: str, body: bytes = b'{"action": "opened"}', at: float | None = None) -> Incoming:
    return Incoming(delivery, "pull_request", {"X-GitHub-Event": "pull_request"}, body, at or time.time())


def job_of(key_pr: int, head: str) -> Classification:
    return Classification("job", "synchronize", 7, "octo/app", key_pr, head)


async def queue_delivery(storage: Storage, delivery: str, pr: int = 1, head: str = "a" * 40) -> None:
    store = storage.deliveries
    assert await store.accept(incoming(delivery))
    await store.classified([(delivery, "queued", job_of(pr, head), None)])


async def finished(storage: Storage, delivery: str, review: ReviewResult | None, pr: int = 1) -> None:
    await queue_delivery(storage, delivery, pr=pr)
    assert await storage.deliveries.start(delivery) is not None
    await storage.deliveries.finish([delivery], "done", review=review)


def attempt_of(delivery: str, attempt: int, outcome: str) -> TimelineEntry:
    return TimelineEntry(delivery, attempt, {"outcome": outcome, "started": 1.5, "error": None,
                                             "calls": [{"path": "/repos/acme/app/check-runs/4", "status": 201}],
                                             "note": "é ✓"})
