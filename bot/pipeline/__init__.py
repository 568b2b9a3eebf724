"""The work a delivery asks for: from a queued job to a completed check run (and a review).

`make_handler(context)` is the seam the server's queue calls; everything GitHub-facing for one
job hangs off the installation client it makes here.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp

from bot.github import GitHubApp
from bot.jobs import Handler, Job
from bot.pipeline.review import Services, review_pull_request
from bot.pipeline.targets import target_for

logger = logging.getLogger("reviewer.pipeline")


class NotConfigured(Exception):
    """The server has no app id or private key, so it cannot act on GitHub."""


def make_services(github: GitHubApp | None, admin: Any, http: aiohttp.ClientSession,
                  secrets_dir: str | None) -> Services:
    """The server's one GitHub App client (made with the app, shared with the admin API)."""
    if github is None:
        raise NotConfigured("GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) are required "
                            "to act on GitHub")
    return Services(github, admin, http, secrets_dir)


def make_handler(github: GitHubApp | None, admin: Any, http: aiohttp.ClientSession,
                 secrets_dir: str | None) -> Handler:
    """The job handler; `admin` is the server's admin configuration holder (`.current` per job)."""
    services: Services | None = None

    async def handle(job: Job) -> None:
        nonlocal services
        target = target_for(job)
        if target is None:
            logger.info("no pull request to review in %s.%s (a fork's check suite lists none)",
                        job.event, job.action)
            return
        if job.installation_id is None:
            raise ValueError(f"{job.event}.{job.action} has no installation id; the app cannot act on it")
        services = services or make_services(github, admin, http, secrets_dir)
        await review_pull_request(services, services.app.installation(job.installation_id), target)

    return handle
