"""What became of posted findings, kept current (I/O; docs/reviews.md "Learnings").

- `follow_to_head`: before a review, and when a thread is resolved or the pull request closed, each
  followed finding not yet changed is brought to the pull request's head: the diff from the head
  its lines are numbered at (GitHub's compare) either changes its lines (`resolved`) or moves them.
  After a force-push (a head GitHub no longer knows, or one the new head does not descend from),
  lines cannot be mapped: given the pull request's diff at the new head, a finding whose code is
  no longer in it is `resolved` (its code is gone), else it stays; without that diff nothing moves.
- `handle`: the jobs of `pull_request_review_thread` (resolved / unresolved: the findings of the
  thread's comments marked) and of `pull_request.closed` (the 👎 read one last time).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime

from bot.events.jobs import Job
from bot.github import GitHubClient, GitHubError, upsert_comment
from bot.github.comments import issue_comments
from bot.github.repos import changes_between
from bot.learnings.book import LearningBook
from bot.learnings.outcomes import Pushed, Rewritten, advance
from bot.learnings.posting import retallied
from bot.pipeline import learn
from bot.pipeline.followed import pull_tally, thread_resolved
from bot.pipeline.services import Services
from bot.reviews.diff import FilePatch, read_patches
from bot.reviews.fingerprints import code_of
from bot.reviews.output import SUMMARY_MARKER

logger = logging.getLogger("reviewer.outcomes")


async def follow_to_head(store: LearningBook, gh: GitHubClient, owner: str, repo: str, pull_key: str,
                         head_sha: str, now: datetime | None = None,
                         diff: Mapping[str, FilePatch] | None = None) -> None:
    """`diff`: the pull request's diff at `head_sha`, by path (for findings a force-push left behind)."""
    moment = now or datetime.now(UTC)
    waiting = [f for f in await store.followed(pull_key)
               if f.tracked.changed is None and f.tracked.head_sha and f.tracked.head_sha != head_sha]
    pushes: dict[str, Pushed | None] = {}
    changed = []
    for followed in waiting:
        old = followed.tracked.head_sha
        if old not in pushes:
            pushes[old] = await _push(gh, owner, repo, old, head_sha, moment)
        push = pushes[old]
        if push is not None:
            changed.append(followed.with_tracked(advance(followed.tracked, push)))
        elif diff is not None:
            rewritten = Rewritten(head_sha, _code_present(followed.code, followed.tracked.path, diff), moment)
            changed.append(followed.with_tracked(advance(followed.tracked, rewritten)))
    await store.update(changed)


def _code_present(code: str, path: str, diff: Mapping[str, FilePatch]) -> bool:
    """Whether a finding's code is still in the pull request's diff (one outside the diff: while its
    file is), as `bot.reviews.fingerprints.still_standing` decides for earlier findings."""
    if not code:
        return path in diff
    return f"\n{code}\n" in f"\n{code_of(diff.get(path), 1, 10**9)}\n"


async def _push(gh: GitHubClient, owner: str, repo: str, old: str, new: str, at: datetime) -> Pushed | None:
    try:
        increment = await changes_between(gh, owner, repo, old, new)
    except GitHubError as exc:
        logger.warning("the changes from %s to %s were not read: %s", old[:7], new[:7], exc.describe())
        return None
    if increment is None or increment.status not in ("ahead", "identical") or not increment.complete:
        return None
    entries = list(increment.files)
    renamed = {str(e["previous_filename"]): str(e["filename"]) for e in entries
               if e.get("status") == "renamed" and e.get("previous_filename")}
    return Pushed(new, read_patches(entries), at, renamed)


async def _retally(store: LearningBook, gh: GitHubClient, owner: str, repo: str, number: int, pull_key: str,
                   login: str) -> None:
    """The summary comment's tally brought up to date in place (best effort: logged when GitHub refuses)."""
    try:
        summary = next((c for c in await issue_comments(gh, owner, repo, number)
                        if (c.get("user") or {}).get("login") == login and SUMMARY_MARKER in (c.get("body") or "")), None)
        if summary is None:
            return
        body = retallied(str(summary["body"]), await pull_tally(store, pull_key, login=login))
        if body is not None and body != summary["body"]:
            await upsert_comment(gh, owner, repo, number, marker=SUMMARY_MARKER,
                                 body=body.replace(SUMMARY_MARKER, "", 1).lstrip("\n"), author=login)
    except GitHubError as exc:
        logger.warning("the tally of %s was not updated: %s", pull_key, exc.describe())


async def handle(services: Services, gh: GitHubClient, job: Job) -> None:
    store = services.learnings
    if store is None or job.repo is None or job.pr_number is None:
        return
    owner, _, repo = job.repo.partition("/")
    pull_key = f"{job.repo}#{job.pr_number}"
    head = str(((job.payload.get("pull_request") or {}).get("head") or {}).get("sha") or "")
    if head:
        await follow_to_head(store, gh, owner, repo, pull_key, head)
    if job.event == "pull_request_review_thread":
        comments = (job.payload.get("thread") or {}).get("comments") or []
        ids = [int(c["id"]) for c in comments if isinstance(c, dict) and isinstance(c.get("id"), int)]
        by = str((job.payload.get("sender") or {}).get("login", ""))
        count = await thread_resolved(store, pull_key, ids, job.action == "resolved", by)
        logger.info("thread %s on %s: %d finding(s) marked", job.action, pull_key, count)
        if count:
            await _retally(store, gh, owner, repo, job.pr_number, pull_key, await services.app_login())
        return
    login = await services.app_login()
    await learn.read_reactions_logged(store, services.access, learn.Place(
        gh, owner, repo, pull_key, login.removesuffix("[bot]"), services.public_url))
