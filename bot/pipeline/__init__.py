"""The work a delivery asks for: from a queued job to a completed check run (and a review).

`make_handler(...)` is the seam the server's queue calls; everything GitHub-facing for one
job hangs off the installation client it makes here.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp

from bot.events.jobs import (
    CONVERSATION_EVENTS,
    INSTALLATION_EVENTS,
    OUTCOME_ACTIONS,
    UPLOAD_EVENT,
    Handler,
    Job,
    ReviewResult,
)
from bot.github import GitHubApp
from bot.pipeline import outcome_events
from bot.pipeline.analyzers import apply_upload
from bot.pipeline.followup import handle_conversation
from bot.pipeline.index import RepositoryIndexes, index_push
from bot.pipeline.installation import index_installation, repository_changes
from bot.pipeline.review import Services, review_pull_request
from bot.pipeline.targets import target_for
from bot.store.stores import Stores

logger = logging.getLogger("reviewer.pipeline")


class NotConfigured(Exception):
    """The server has no app id or private key, so it cannot act on GitHub."""


def make_services(github: GitHubApp | None, admin: Any, http: aiohttp.ClientSession, secrets_dir: str | None, *,
                  stores: Stores, incremental: bool = True, public_url: str | None = None) -> Services:
    """The server's one GitHub App client (made with the app, shared with the admin API), the
    review memory, the repository indexes, the uploads, budgets and learnings: the process's
    stores (bot/store/stores.py, on its one pool)."""
    if github is None:
        raise NotConfigured("GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) are required "
                            "to act on GitHub")
    return Services(github, admin, http, secrets_dir, memory=stores.memory, incremental=incremental,
                    indexes=RepositoryIndexes(stores.indexes), uploads=stores.uploads,
                    budgets=stores.budgets, learnings=stores.learnings, public_url=public_url)


def make_handler(github: GitHubApp | None, admin: Any, http: aiohttp.ClientSession, secrets_dir: str | None, *,
                 stores: Stores, incremental: bool = True, public_url: str | None = None) -> Handler:
    """The job handler; `admin` is the server's admin configuration holder (`.current` per job).
    `incremental=False` is the review life before issue #15, kept for the cost bench's baseline:
    every event reviews the whole pull request, and posts whatever the model finds."""
    services: Services | None = None

    def ready() -> Services:
        nonlocal services
        services = services or make_services(github, admin, http, secrets_dir, stores=stores,
                                             incremental=incremental, public_url=public_url)
        return services

    async def handle(job: Job) -> ReviewResult | None:
        """Run the job; what the review it ran came to (None: it ran none)."""
        if job.event == "push":
            await _push(job)
            return None
        if job.event in INSTALLATION_EVENTS:
            await _installation_indexes(job)
            return None
        if job.event == UPLOAD_EVENT:
            services = ready()
            return await apply_upload(services, services.app.installation(_installation(job)), job)
        if job.action in OUTCOME_ACTIONS.get(job.event, ()):  # a thread resolved, a pull request closed
            services = ready()
            await outcome_events.handle(services, services.app.installation(_installation(job)), job)
            return None
        if job.event in CONVERSATION_EVENTS:
            services = ready()
            return await handle_conversation(services, services.app.installation(_installation(job)), job)
        target = target_for(job)
        if target is None:
            logger.info("no pull request to review in %s.%s (a fork's check suite lists none)",
                        job.event, job.action)
            return None
        services = ready()
        return await review_pull_request(services, services.app.installation(_installation(job)), target)

    async def _push(job: Job) -> None:
        services = ready()
        if services.indexes is None or job.repo is None or job.head_sha is None or job.installation_id is None:
            return
        await index_push(services.indexes, services.app.installation(job.installation_id), services.admin.current,
                         job.repo, job.head_sha)

    async def _installation_indexes(job: Job) -> None:
        services = ready()
        if services.indexes is None:
            return
        changes = repository_changes(job.event, job.action, job.payload)
        await index_installation(services.indexes, lambda: services.app.installation(_installation(job)),
                                 services.admin.current, changes)

    return handle


def _installation(job: Job) -> int:
    if job.installation_id is None:
        raise ValueError(f"{job.event}.{job.action} has no installation id; the app cannot act on it")
    return job.installation_id
