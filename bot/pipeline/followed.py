"""Following posted findings (I/O): what each finding a review posted became (docs/reviews.md
"Learnings").

When a review's findings are on GitHub — the model's and the analyzers' — `follow_posted` records
each one (`bot.learnings.followed`)
with the id of its inline comment, read back from the pull request's review comments: the app's
own first comments of a thread, at the finding's path and lines, not yet taken by another finding.
That id is what a reply (`@reviewer ignore`), a 👎 and a resolved thread are matched by. A finding
listed in the summary only has none; it is followed all the same, for the tally.

`thread_resolved` applies a `pull_request_review_thread` event to the findings of its comments.
Reading the comments back is best effort: a GitHub error is logged and the findings are followed
without their comment ids (no reply can then make a learning from them), never failing the review.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from bot.github import GitHubClient, GitHubError
from bot.github.comments import review_comments
from bot.learnings.book import LearningBook
from bot.learnings.followed import Followed
from bot.learnings.outcomes import State, ThreadResolved, Tracked, advance
from bot.learnings.tally import Tally, tally
from bot.learnings.threads import closed_by
from bot.reviews.fingerprints import PostedFinding
from bot.reviews.ledger import Ledger

logger = logging.getLogger("reviewer.followed")


async def follow_posted(store: LearningBook, gh: GitHubClient, owner: str, repo: str, number: int, pull_key: str,
                        ledger: Ledger, inline: bool, login: str, now: datetime | None = None) -> None:
    """What the ledger says was posted at its head, every source (`inline`: some of it inline)."""
    posted = [(e.finding, e.record(ledger.head_sha)) for e in ledger.posting]
    if not posted:
        return
    known = await store.followed(pull_key)
    taken = {f.comment_id for f in known if f.comment_id is not None}
    followed_prints = {f.tracked.fingerprint for f in known}
    ours: list[Mapping[str, Any]] = []
    if inline:
        try:
            ours = [c for c in await review_comments(gh, owner, repo, number)
                    if (c.get("user") or {}).get("login") == login and not c.get("in_reply_to_id")
                    and c.get("id") not in taken]
        except GitHubError as exc:
            logger.warning("the inline comments of %s were not read back: %s", pull_key, exc.describe())
    moment = now or datetime.now(UTC)
    new = []
    for finding, printed in posted:
        if printed.fingerprint in followed_prints:
            continue
        comment = next((c for c in ours if c.get("path") == finding.path and c.get("line") == finding.end_line
                        and (c.get("start_line") or c.get("line")) == finding.start_line), None)
        if comment is not None:
            ours.remove(comment)
        tracked = Tracked(printed.fingerprint, finding.path, finding.start_line, finding.end_line,
                          ledger.head_sha, moment, tuple(finding.rules), finding.category)
        new.append(Followed(pull_key, owner, repo, tracked, finding.message, finding.severity,
                            int(comment["id"]) if comment is not None else None,
                            str(comment.get("html_url")) if comment is not None and comment.get("html_url") else None,
                            printed.code))
    await store.follow(new)


async def thread_resolved(store: LearningBook, pull_key: str, comment_ids: list[int], resolved: bool, by: str,
                          now: datetime | None = None) -> int:
    """A review thread resolved (or unresolved again): its findings marked; how many there were."""
    ids = set(comment_ids)
    moment = now or datetime.now(UTC)
    changed = [f.with_tracked(advance(f.tracked, ThreadResolved(resolved, by, moment)))
               for f in await store.followed(pull_key) if f.comment_id in ids]
    await store.update(changed)
    return len(changed)


async def pull_tally(store: LearningBook, pull_key: str, posting: Iterable[PostedFinding] = (),
                     login: str = "") -> Tally:
    """What became of the pull request's posted findings so far, with those being posted (open),
    and how many threads the app (`login`) closed itself."""
    known = await store.followed(pull_key)
    followed = {f.tracked.fingerprint for f in known}
    fresh = {p.fingerprint for p in posting} - followed
    opened: list[State] = ["open"] * len(fresh)
    return tally([*(f.state for f in known), *opened], closed=sum(closed_by(f, login) for f in known))
