"""Closing the app's own review threads (I/O; bot/learnings/threads.py decides which).

After a push resolved a posted finding and the review of the new head did not find it again, its
thread is resolved through GraphQL (`resolveReviewThread`) — only a thread in which the app alone
spoke, and only one still open, so that a retried job closes nothing twice — and the finding is
marked as its thread closed by the app, which the tally counts. Best effort: GitHub refusing or
failing is logged, and the review goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from bot.github import GitHubClient, GitHubError
from bot.github.threads import closable, resolve_thread, review_threads
from bot.learnings.book import LearningBook
from bot.learnings.outcomes import ThreadResolved, advance
from bot.pipeline.targets import Target

logger = logging.getLogger("reviewer.threads")


async def close_threads(store: LearningBook | None, gh: GitHubClient, target: Target, roots: Sequence[int],
                        login: str, now: datetime | None = None) -> int:
    """Resolve the threads the comments `roots` started; how many the app closed now."""
    if store is None or not roots:
        return 0
    try:
        threads = await review_threads(gh, target.owner, target.repo, target.number)
        closing = closable(threads, roots, login)
        closed = [t.root for t in closing if await resolve_thread(gh, t.id)]
    except GitHubError as exc:
        logger.warning("the threads of %s were not closed: %s", target.pull_key, exc.describe())
        return 0
    moment = now or datetime.now(UTC)
    ids = set(closed)
    marked = [f.with_tracked(advance(f.tracked, ThreadResolved(True, login, moment)))
              for f in await store.followed(target.pull_key) if f.comment_id in ids]
    await store.update(marked)
    logger.info("%s: closed %d thread(s) of resolved findings", target.pull_key, len(closed))
    return len(closed)
