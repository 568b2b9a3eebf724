"""The work a delivery asks for: from a queued job to a completed check run (and a review).

`make_handler(...)` is the seam the server's queue calls; everything GitHub-facing for one
job hangs off the installation client it makes here.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp

from bot.events.jobs import Handler, Job, ReviewResult
from bot.github import GitHubApp
from bot.pipeline import router
from bot.pipeline.index import RepositoryIndexes
from bot.pipeline.services import Services
from bot.reviews.memory import ReviewMemory
from bot.store import is_postgres
from bot.store.budgets import budget_store
from bot.store.index import postgres_stores, sqlite_stores
from bot.store.learnings import learnings_store
from bot.store.reviews import review_memory_for
from bot.store.sqlite.database import sqlite_path
from bot.store.uploads import UploadStore

logger = logging.getLogger("reviewer.pipeline")


class NotConfigured(Exception):
    """The server has no app id or private key, so it cannot act on GitHub."""


def make_services(github: GitHubApp | None, admin: Any, http: aiohttp.ClientSession, secrets_dir: str | None, *,
                  database_url: str, incremental: bool = True, public_url: str | None = None) -> Services:
    """The server's one GitHub App client (made with the app, shared with the admin API), the
    review memory and the repository indexes in the server's database."""
    if github is None:
        raise NotConfigured("GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) are required "
                            "to act on GitHub")
    return Services(github, admin, http, secrets_dir, memory=review_memory(database_url), incremental=incremental,
                    indexes=_indexes(database_url), uploads=UploadStore(database_url),
                    budgets=budget_store(database_url), learnings=learnings_store(database_url), public_url=public_url)


def _indexes(database_url: str) -> RepositoryIndexes:
    """Repository indexes live in their own SQLite file beside the server's database, so that a
    build's long writes never hold the lock that the webhook intake commits under; on PostgreSQL,
    in the server's database."""
    if is_postgres(database_url):
        return RepositoryIndexes(postgres_stores(database_url))
    database = sqlite_path(database_url)
    stem = database[:-3] if database.endswith(".db") else database
    return RepositoryIndexes(sqlite_stores(stem + "-index.sqlite3"))


def review_memory(database_url: str) -> ReviewMemory:
    """The review memory in the server's database: PostgreSQL when the URL names it, else SQLite."""
    return review_memory_for(database_url)


def make_handler(github: GitHubApp | None, admin: Any, http: aiohttp.ClientSession, secrets_dir: str | None, *,
                 database_url: str, incremental: bool = True, public_url: str | None = None) -> Handler:
    """The job handler; `admin` is the server's admin configuration holder (`.current` per job).
    `incremental=False` is the review life before issue #15, kept for the cost bench's baseline:
    every event reviews the whole pull request, and posts whatever the model finds."""
    services: Services | None = None

    def ready() -> Services:
        nonlocal services
        services = services or make_services(github, admin, http, secrets_dir, database_url=database_url,
                                             incremental=incremental, public_url=public_url)
        return services

    async def handle(job: Job) -> ReviewResult | None:
        """Run the job's step (bot/pipeline/router.py); what the review it ran came to (None: it ran none)."""
        return await router.run(ready, job)

    return handle
