"""The work a delivery asks for: from a queued job to a completed check run (and a review).

`make_handler(...)` is the seam the server's queue calls; everything GitHub-facing for one
job hangs off the installation client it makes here.
"""

from __future__ import annotations

import logging

import aiohttp

from bot.events.jobs import Handler, Job, ReviewResult
from bot.github import GitHubApp
from bot.learnings.book import LearningBook
from bot.pipeline import router
from bot.pipeline.index import RepositoryIndexes
from bot.pipeline.services import AdminSource, Services
from bot.store.stores import Stores

logger = logging.getLogger("reviewer.pipeline")


class NotConfigured(Exception):
    """The server has no app id or private key, so it cannot act on GitHub."""


def make_services(github: GitHubApp | None, admin: AdminSource, http: aiohttp.ClientSession, secrets_dir: str | None, *,
                  stores: Stores, incremental: bool = True, public_url: str | None = None) -> Services:
    """The server's one GitHub App client (made with the app, shared with the admin API), the
    review memory, the repository indexes, the uploads, budgets and learnings: the process's
    stores (bot/store/stores.py, on its one pool)."""
    if github is None:
        raise NotConfigured("GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) are required "
                            "to act on GitHub")
    return Services(github, admin, http, secrets_dir, memory=stores.memory, incremental=incremental,
                    indexes=RepositoryIndexes(stores.indexes), uploads=stores.uploads,
                    budgets=stores.budgets, learnings=LearningBook(stores.learnings), public_url=public_url)


def make_handler(github: GitHubApp | None, admin: AdminSource, http: aiohttp.ClientSession, secrets_dir: str | None, *,
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
        """Run the job's step (bot/pipeline/router.py); what the review it ran came to (None: it ran none)."""
        return await router.run(ready, job)

    return handle
