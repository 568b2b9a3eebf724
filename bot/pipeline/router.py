"""Which pipeline step does each kind of work: the other half of the routing table.

`bot/events/routes.py` says which event and action mean which kind of work (pure, read by the
dispatcher too); `STEPS` binds each kind to the step that does it, and `run` hands a job to its
step. A step takes the job and `ready`, which makes the server's services on first use: a job that
turns out to need none (a fork's check suite names no pull request) runs without them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping

from bot.events.jobs import Job, ReviewResult
from bot.events.routes import Work, route
from bot.pipeline import outcome_events
from bot.pipeline.followup import handle_followup
from bot.pipeline.index import index_push
from bot.pipeline.installation import index_installation, repository_changes
from bot.pipeline.review import review_pull_request
from bot.pipeline.services import Services
from bot.pipeline.targets import target_for
from bot.pipeline.upload_job import apply_upload

logger = logging.getLogger("reviewer.pipeline")

Ready = Callable[[], Services]
Step = Callable[[Ready, Job], Awaitable[ReviewResult | None]]


def installation_of(job: Job) -> int:
    if job.installation_id is None:
        raise ValueError(f"{job.event}.{job.action} has no installation id; the app cannot act on it")
    return job.installation_id


async def review(ready: Ready, job: Job) -> ReviewResult | None:
    target = target_for(job)
    if target is None:
        logger.info("no pull request to review in %s.%s (a fork's check suite lists none)", job.event, job.action)
        return None
    services = ready()
    return await review_pull_request(services, services.app.installation(installation_of(job)), target)


async def outcome(ready: Ready, job: Job) -> None:
    """A thread resolved, a pull request closed: what became of its findings."""
    services = ready()
    await outcome_events.handle(services, services.app.installation(installation_of(job)), job)


async def followup(ready: Ready, job: Job) -> ReviewResult | None:
    services = ready()
    return await handle_followup(services, services.app.installation(installation_of(job)), job)


async def upload(ready: Ready, job: Job) -> ReviewResult | None:
    services = ready()
    return await apply_upload(services, services.app.installation(installation_of(job)), job)


async def push(ready: Ready, job: Job) -> None:
    services = ready()
    if services.indexes is None or job.repo is None or job.head_sha is None or job.installation_id is None:
        return
    await index_push(services.indexes, services.app.installation(job.installation_id), services.admin.current,
                     job.repo, job.head_sha)


async def installation(ready: Ready, job: Job) -> None:
    services = ready()
    if services.indexes is None:
        return
    changes = repository_changes(job.event, job.action, job.payload)
    await index_installation(services.indexes, lambda: services.app.installation(installation_of(job)),
                             services.admin.current, changes)


# Every kind of work, and its step; None: the dispatcher does it and queues no job.
STEPS: Mapping[Work, Step | None] = {
    "review": review,
    "outcome": outcome,
    "followup": followup,
    "upload": upload,
    "index_push": push,
    "index_installation": installation,
    "record_installation": None,
}


async def run(ready: Ready, job: Job) -> ReviewResult | None:
    """Run the job's step; what the review it ran came to (None: it ran none)."""
    work = route(job.event, job.action)
    step = STEPS[work] if work is not None else None
    if step is None:
        logger.info("no step for %s.%s: nothing to do", job.event, job.action)
        return None
    logger.debug("step %s", work, extra={"step": work, "event": job.event, "action": job.action})
    return await step(ready, job)
