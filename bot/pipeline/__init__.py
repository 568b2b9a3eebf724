"""The work a delivery asks for: from a queued job to a completed check run (and a review).

`make_handler(context)` is the seam the server's queue calls; everything GitHub-facing for one
job hangs off the installation client it makes here.
"""

from __future__ import annotations

import logging

from bot.pipeline.index import RepositoryIndexes, index_push, postgres_stores, sqlite_stores
from bot.pipeline.review import Services, review_pull_request
from bot.pipeline.targets import target_for
from bot.server.app import ServerContext
from bot.server.jobs import Handler, Job

logger = logging.getLogger("reviewer.pipeline")


class NotConfigured(Exception):
    """The server has no app id or private key, so it cannot act on GitHub."""


def make_services(context: ServerContext) -> Services:
    """The server's one GitHub App client (made with the app, shared with the admin API)."""
    if context.github is None:
        raise NotConfigured("GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or GITHUB_PRIVATE_KEY_PATH) are required "
                            "to act on GitHub")
    return Services(context.github, context.admin, context.http, context.settings.secrets_dir,
                    indexes=_indexes(context))


def _indexes(context: ServerContext) -> RepositoryIndexes | None:
    """Repository indexes live in their own SQLite file beside the server's database, so that a
    build's long writes never hold the lock that the webhook intake commits under; on PostgreSQL,
    in the server's database."""
    url = context.settings.database_url
    if url.startswith(("postgresql://", "postgres://")):
        return RepositoryIndexes(postgres_stores(url))
    try:
        database = context.settings.database_path
    except ValueError:  # a database URL of another kind: no index
        return None
    stem = database[:-3] if database.endswith(".db") else database
    return RepositoryIndexes(sqlite_stores(stem + "-index.sqlite3"))


def make_handler(context: ServerContext) -> Handler:
    services: Services | None = None

    async def handle(job: Job) -> None:
        nonlocal services
        if job.event == "push":
            await _push(job)
            return
        target = target_for(job)
        if target is None:
            logger.info("no pull request to review in %s.%s (a fork's check suite lists none)",
                        job.event, job.action)
            return
        if job.installation_id is None:
            raise ValueError(f"{job.event}.{job.action} has no installation id; the app cannot act on it")
        services = services or make_services(context)
        await review_pull_request(services, services.app.installation(job.installation_id), target)

    async def _push(job: Job) -> None:
        nonlocal services
        services = services or make_services(context)
        if services.indexes is None or job.repo is None or job.head_sha is None or job.installation_id is None:
            return
        await index_push(services.indexes, services.app.installation(job.installation_id), services.admin.current,
                         job.repo, job.head_sha)

    return handle
