"""Learnings made on GitHub (I/O): `@reviewer learn …`, `@reviewer ignore` / `not-an-issue` in
reply to a finding, and 👎 reactions on finding comments (docs/reviews.md "Learnings").

The decisions are `bot.learnings.capture`'s; here they meet GitHub and the store. The author's
write access is asked of GitHub (`WriteAccess`, as follow-ups are), never read from the comment;
without it the app answers why it learned nothing (a follow-up from a reader is ignored, but a
learning command gets its refusal, so that nobody believes the app learned what it did not). The
finding a reply is about is the one the store followed when its inline comment was posted
(`bot.pipeline.followed`). A learning that says what one already there says is not added again:
the answer names the one there.

Reactions are not webhook events: `read_reactions` lists the 👎 on each followed finding comment
of the pull request, when it is next reviewed and when it is closed; a 👎 by a writer makes the
learning `ignore` would, and marks the finding dismissed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.github import GitHubClient, GitHubError
from bot.learnings.book import LearningBook
from bot.learnings.capture import Heard, Learned, Said, answer, decide, duplicate_of, from_reaction
from bot.learnings.followed import Followed
from bot.learnings.model import Learning, new_id
from bot.learnings.outcomes import LearnedFrom, Reacted, advance
from bot.learnings.review import ForReview
from bot.pipeline.write_access import WriteAccess

logger = logging.getLogger("reviewer.learn")
THUMBS_DOWN = "-1"


@dataclass(frozen=True)
class Comment:
    """The comment that holds a learning command, as its delivery gives it."""

    author: str
    url: str | None
    root_id: int | None  # the review thread's first comment, for a reply in one
    root_by_app: bool  # that first comment is the app's


@dataclass(frozen=True)
class Place:
    gh: GitHubClient
    owner: str
    repo: str
    pull_key: str  # `owner/repo#number`
    slug: str  # the app's, without `[bot]`
    console_url: str | None = None


async def keep(store: LearningBook, learning: Learning) -> tuple[Learning, bool]:
    """Add `learning` unless one that says the same is there: (the learning kept, whether it was there)."""
    scope = learning.scope
    existing = await store.learnings(account=scope.account, repository=scope.repository, kind=learning.kind)
    same = duplicate_of(learning, [x for x in existing if (x.scope.repository or "") == (scope.repository or "")])
    if same is not None:
        return same, True
    await store.add(learning)
    return learning, False


async def from_comment(store: LearningBook, access: WriteAccess, place: Place, heard: Heard, comment: Comment,
                       post: Callable[[str], Awaitable[None]], now: datetime | None = None) -> None:
    """Decide on a learning command, keep what it teaches, and post the answer (or the refusal)."""
    followed = None
    if comment.root_id is not None and comment.root_by_app:
        followed = await store.by_comment(place.pull_key, comment.root_id)
    may_write = await access.may_write(place.gh, place.owner, place.repo, comment.author)
    said = Said(place.owner, place.repo, comment.author, may_write, place.slug, comment.url,
                followed.finding() if followed is not None else None)
    moment = now or datetime.now(UTC)
    decided = decide(heard, said, id=new_id(), now=moment)
    if not isinstance(decided, Learned):
        logger.info("learning command by %s on %s refused: %s", comment.author, place.pull_key, decided.reason)
        await post(decided.reason)
        return
    kept, again = await keep(store, decided.learning)
    if followed is not None and kept.kind == "suppress":
        await store.update([followed.with_tracked(advance(followed.tracked, LearnedFrom(kept.id, moment)))])
    logger.info("learning %s %s from %s's comment on %s", kept.id, "found again" if again else "made",
                comment.author, place.pull_key)
    await post(answer(kept, console_url=place.console_url, again=again))


async def thumbs_down(gh: GitHubClient, owner: str, repo: str, comment_id: int) -> list[str]:
    """The logins that put a 👎 on a review comment (GitHub's reactions endpoint, filtered)."""
    reactions = await gh.get_all("/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions",
                                 {"owner": owner, "repo": repo, "comment_id": comment_id, "content": THUMBS_DOWN})
    return [str((r.get("user") or {}).get("login", "")) for r in reactions
            if r.get("content") == THUMBS_DOWN and (r.get("user") or {}).get("type") != "Bot"]


async def read_reactions(store: LearningBook, access: WriteAccess, place: Place,
                         now: datetime | None = None) -> list[Learning]:
    """Read the 👎 on the pull request's followed finding comments not yet dismissed: each by a
    writer makes a learning (once) and dismisses its finding. The learnings made."""
    made: list[Learning] = []
    changed: list[Followed] = []
    for followed in await store.followed(place.pull_key):
        if followed.comment_id is None or followed.tracked.dismissed is not None:
            continue
        try:
            logins = await thumbs_down(place.gh, place.owner, place.repo, followed.comment_id)
        except GitHubError as exc:
            if exc.status != 404:  # the comment was deleted: nothing to read
                raise
            continue
        for login in logins:
            if not await access.may_write(place.gh, place.owner, place.repo, login):
                logger.info("👎 by %s on %s: no write access, not learned", login, place.pull_key)
                continue
            moment = now or datetime.now(UTC)
            said = Said(place.owner, place.repo, login, True, place.slug, followed.comment_url, followed.finding())
            decided = from_reaction(said, id=new_id(), now=moment)
            if isinstance(decided, Learned):
                kept, again = await keep(store, decided.learning)
                if not again:
                    made.append(kept)
            changed.append(followed.with_tracked(advance(followed.tracked, Reacted(login, moment))))
            break
    await store.update(changed)
    return made


async def read_reactions_logged(store: LearningBook, access: WriteAccess, place: Place) -> None:
    """`read_reactions`, best effort: a GitHub error is logged, and the review (or the close) goes on
    with the learnings already kept."""
    try:
        await read_reactions(store, access, place)
    except GitHubError as exc:
        logger.warning("the reactions on the findings of %s were not read: %s", place.pull_key, exc.describe())


async def for_review(store: LearningBook, place: Place) -> ForReview:
    """The learnings a review of the pull request's repository applies."""
    return ForReview(place.owner, place.repo, tuple(await store.learnings(account=place.owner, repository=place.repo)))


async def from_model_reply(store: LearningBook, place: Place, root_id: int, author: str, url: str | None,
                           reason: str, now: datetime | None = None) -> str:
    """The model classified a writer's reply to a finding as "intended / does not apply here":
    the learning `ignore` would make, and the lines confirming it under the model's answer ("" when
    the thread's finding is not one the store follows)."""
    followed = await store.by_comment(place.pull_key, root_id)
    if followed is None:
        return ""
    said = Said(place.owner, place.repo, author, True, place.slug, url, followed.finding())
    moment = now or datetime.now(UTC)
    decided = decide(Heard("ignore", reason[:500]), said, id=new_id(), now=moment)
    if not isinstance(decided, Learned):
        return ""
    kept, again = await keep(store, decided.learning)
    await store.update([followed.with_tracked(advance(followed.tracked, LearnedFrom(kept.id, moment)))])
    logger.info("learning %s from %s's reply on %s, as the model read it", kept.id, author, place.pull_key)
    return "\n\n---\n\n" + answer(kept, console_url=place.console_url, again=again)
