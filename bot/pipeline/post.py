"""Posting a finished review back to the pull request (I/O), best effort where GitHub may refuse.

One review carries the inline comments of every source (the model's and the analyzers'), its body
read from the head's ledger; the summary lives in one issue comment updated in place; approvals
and dismissals follow the engine's decisions. GitHub refuses some of these for reasons
that are not errors of ours (an app cannot approve a pull request it opened; a protected branch
may forbid dismissals): those are logged and shown in the check run, and the run goes on.

Each is posted once (bot.pipeline.journal): the review and an approval carry a hidden marker that
names the delivery, and an attempt after the first looks for them before posting (`once`), as it
looks whether a review it would dismiss is dismissed already; the summary comment is updated in
place by its own marker anyway. A create that GitHub answered with a 5xx or not at all is looked
for too before it is sent again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.github import (
    GitHubClient,
    GitHubError,
    GitHubUnavailable,
    ReviewComment,
    create_review,
    dismiss_review,
    list_reviews,
    upsert_comment,
)
from bot.pipeline.journal import marker
from bot.pipeline.targets import Target
from bot.reviews.output import SUMMARY_MARKER, ApprovalAction, ReviewOutput

logger = logging.getLogger("reviewer.post")


@dataclass
class Posted:
    """What was carried out: each decision's JSON (with `refused` when GitHub said no) and notes."""

    decisions: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def once(create: Callable[[bool], Awaitable[Any]], find: Callable[[], Awaitable[bool]], retry: bool) -> bool:
    """Create something on GitHub that `find` recognises (its marker), once: on a `retry` what is
    there already is taken up; a create GitHub answered with a 5xx or not at all may have been
    carried out, so it is looked for before it is sent again. False when it was taken up.
    `create(resend)` sends it (`resend`: whether the client may send it again by itself)."""
    if retry and await find():
        return False
    try:
        await create(False)
    except GitHubUnavailable as exc:
        if 0 < exc.status < 500:  # a rate limit that lasted too long: nothing was created
            raise
        if await find():
            return False
        await create(True)
    return True


def _ours(target: Target, what: str) -> str:
    """The marker a write of this job carries ("" for a job without a delivery: nothing to find)."""
    return marker(target.delivery_id, what) if target.delivery_id else ""


async def _has_review(gh: GitHubClient, target: Target, login: str, mark: str) -> bool:
    if not mark:
        return False
    reviews = await list_reviews(gh, target.owner, target.repo, target.number)
    return any((r.get("user") or {}).get("login") == login and mark in (r.get("body") or "") for r in reviews)


async def has_review(gh: GitHubClient, target: Target, login: str, mark: str) -> bool:
    """Whether the app's review carrying `mark` is on the pull request (bot/pipeline/upload_job.py)."""
    return await _has_review(gh, target, login, mark)


async def carry_out(gh: GitHubClient, target: Target, decision: ApprovalAction, login: str) -> str | None:
    """One approval decision carried out, as after a review (bot/pipeline/upload_job.py)."""
    return await _carry_out(gh, target, decision, login)


async def post_output(gh: GitHubClient, target: Target, output: ReviewOutput, app_login: str,
                       on_posted: Callable[[], Awaitable[None]] | None = None) -> Posted:
    """`on_posted` runs once the findings are on GitHub (inline, or in the summary when GitHub
    refused their places) and before anything else is written: the moment to remember them, so
    that a later failure and its retry never post them twice."""
    posted = Posted()
    owner, repo, number = target.owner, target.repo, target.number
    if output.status == "skipped":
        return posted
    refused = await _inline_review(gh, target, output, app_login) if output.status == "completed" else None
    if output.status == "completed" and on_posted is not None:
        await on_posted()
    # A failed review updates the summary too: the comment must not keep an older head's verdict.
    # The engine's summary starts with the marker, which upsert_comment puts first itself.
    body = output.summary.removeprefix(SUMMARY_MARKER).lstrip("\n")
    if refused:
        posted.notes.append(refused)
        body += _inline_in_summary(output)
    await upsert_comment(gh, owner, repo, number, marker=SUMMARY_MARKER, body=body, author=app_login)
    if output.status != "completed":
        return posted
    for decision in output.decisions:
        refused = await _carry_out(gh, target, decision, app_login)
        posted.decisions.append({**decision.to_json(), "refused": refused})
    return posted


async def _inline_review(gh: GitHubClient, target: Target, output: ReviewOutput, login: str) -> str | None:
    """The review carrying the inline comments. Should GitHub refuse a comment's place (422),
    the findings are still in the summary comment and the check run: say so, go on."""
    review = output.review_request()
    if review is None:
        return None
    comments = [ReviewComment(c.path, c.line, c.body, side=c.side, start_line=c.start_line) for c in output.inline]
    mark = _ours(target, "review")
    body = f"{mark}\n{review['body']}" if mark else review["body"]

    async def create(resend: bool) -> None:
        await create_review(gh, target.owner, target.repo, target.number, commit_id=review["commit_id"],
                            event=review["event"], body=body, comments=comments, resend_unanswered=resend)
    try:
        if not await once(create, lambda: _has_review(gh, target, login, mark), retry=target.attempt > 1):
            logger.info("the review's inline comments were posted by an earlier attempt: taken up")
    except GitHubError as exc:
        if exc.status != 422:
            raise
        logger.warning("GitHub refused the inline comments: %s", exc.message)
        return (f"GitHub refused the inline comments (422): {exc.message}; they are in the summary comment "
                "instead")
    return None


def _inline_in_summary(output: ReviewOutput) -> str:
    parts = [f"**`{c.path}` line {c.line}**\n\n{c.body}" for c in output.inline]
    return "\n\n### Findings GitHub did not place on the diff\n\n" + "\n\n".join(parts)


async def _carry_out(gh: GitHubClient, target: Target, decision: ApprovalAction, login: str) -> str | None:
    """Approve or dismiss as decided, logged either way; returns a note when GitHub refused."""
    retry = target.attempt > 1
    if decision.kind == "approve":
        what, mark = "approve", _ours(target, "approval")

        async def approve(resend: bool) -> None:
            await create_review(gh, target.owner, target.repo, target.number, event="APPROVE",
                                body=f"{mark}\n{decision.reason}" if mark else decision.reason,
                                commit_id=decision.commit_id or target.head_sha, resend_unanswered=resend)
        call = once(approve, lambda: _has_review(gh, target, login, mark), retry)
    elif decision.kind == "dismiss" and decision.review_id is not None:
        what = f"dismiss review {decision.review_id}"
        call = _dismiss(gh, target, decision.review_id, decision.reason, retry)
    else:
        return None
    try:
        await call
    except GitHubError as exc:
        if exc.status not in (403, 404, 422):
            raise
        logger.warning("GitHub refused to %s: %s", what, exc.message)
        return f"GitHub refused to {what} ({exc.status}): {exc.message}"
    logger.info("did %s: %s", what, decision.reason)
    return None


async def _dismiss(gh: GitHubClient, target: Target, review_id: int, reason: str, retry: bool) -> bool:
    """Dismiss a review, unless (on a retry) an earlier attempt did: a dismissal is not repeated."""
    if retry:
        reviews = await list_reviews(gh, target.owner, target.repo, target.number)
        if any(r.get("id") == review_id and r.get("state") == "DISMISSED" for r in reviews):
            return False
    await dismiss_review(gh, target.owner, target.repo, target.number, review_id, reason)
    return True
