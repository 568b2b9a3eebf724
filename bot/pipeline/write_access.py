"""Who may talk to the app: write access to the repository, asked of GitHub and cached.

A follow-up costs a model call, so only people who could change the code themselves are
answered. The answer is cached per repository and login for a few minutes: a busy thread asks
GitHub once, and a permission taken away stops counting within the TTL.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.github import GitHubClient
from bot.github.comments import can_write

TTL = 600.0  # seconds
MAX_ENTRIES = 10_000


@dataclass
class WriteAccess:
    clock: Callable[[], float] = time.monotonic
    _known: dict[tuple[str, str], tuple[float, bool]] = field(default_factory=dict)

    async def may_write(self, gh: GitHubClient, owner: str, repo: str, login: str) -> bool:
        key = (f"{owner}/{repo}".lower(), login.lower())
        now = self.clock()
        cached = self._known.get(key)
        if cached is not None and now - cached[0] < TTL:
            return cached[1]
        allowed = await can_write(gh, owner, repo, login)
        if len(self._known) >= MAX_ENTRIES:
            self._known.clear()
        self._known[key] = (now, allowed)
        return allowed
