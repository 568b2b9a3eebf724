"""What the jobs of the pipeline share: the server's clients and stores (`Services`), made once per
server by `bot.pipeline.make_services`. A module of its own, so that the steps that take it (the
review, the analyzers, the outcomes, the follow-ups) need not import one another for its type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import aiohttp

from bot.config.admin import AdminConfig
from bot.github import GitHubApp
from bot.learnings.book import LearningBook
from bot.pipeline.index import RepositoryIndexes
from bot.pipeline.write_access import WriteAccess
from bot.reviews.memory import ReviewMemory
from bot.store.budgets import BudgetStore
from bot.store.uploads import UploadStore


class AdminSource(Protocol):
    """Where a job reads the admin configuration in force (the server's AdminConfigHolder, which
    reloads the file): read at each job's start, so a reload counts from the next job on."""

    @property
    def current(self) -> AdminConfig | None: ...


@dataclass
class Services:
    """What a review needs beyond the pull request: made once per server, shared by jobs."""

    app: GitHubApp
    admin: AdminSource  # `.current`: the admin configuration in force (None: no admin file)
    http: aiohttp.ClientSession
    secrets_dir: str | None = None
    memory: ReviewMemory | None = None  # what the app remembers of each pull request
    incremental: bool = True  # False: every event reviews the whole pull request afresh, as before #15
    access: WriteAccess = field(default_factory=WriteAccess)  # who may talk to the app, cached
    indexes: RepositoryIndexes | None = None  # None: no repository index (a store without one)
    learnings: LearningBook | None = None  # learnings and posted findings' outcomes (bot/pipeline/learn.py)
    public_url: str | None = None  # the server's, for links to its console in answers
    uploads: UploadStore | None = None  # SARIF uploads waiting for their pull request (bot/store/uploads.py)
    budgets: BudgetStore | None = None  # the accounts' budget counts (None: budgets are not enforced)
    _login: str | None = field(default=None, init=False)

    async def app_login(self) -> str:
        """The app's bot login (`<slug>[bot]`), asked of GitHub once per process."""
        if self._login is None:
            self._login = f"{(await self.app.app_info())['slug']}[bot]"
        return self._login
