"""Posting a finished review back to the pull request (I/O), best effort where GitHub may refuse.

One review carries the inline comments; the summary lives in one issue comment updated in place;
approvals and dismissals follow the engine's decisions. GitHub refuses some of these for reasons
that are not errors of ours (an app cannot approve a pull request it opened; a protected branch
may forbid dismissals): those are logged and shown in the check run, and the run goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.engine.outcome import SUMMARY_MARKER, Decision, ReviewOutcome
from bot.github import GitHubClient, GitHubError, ReviewComment, create_review, dismiss_review, upsert_comment
from bot.pipeline.targets import Target

logger = logging.getLogger("reviewer.post")


@dataclass
class Posted:
    """What was carried out: each decision's JSON (with `refused` when GitHub said no) and notes."""

    decisions: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def post_outcome(gh: GitHubClient, target: Target, outcome: ReviewOutcome, app_login: str,
                       on_posted: Callable[[], Awaitable[None]] | None = None) -> Posted:
    """`on_posted` runs once the findings are on GitHub (inline, or in the summary when GitHub
    refused their places) and before anything else is written: the moment to remember them, so
    that a later failure and its retry never post them twice."""
    posted = Posted()
    owner, repo, number = target.owner, target.repo, target.number
    if outcome.status == "skipped":
        return posted
    refused = await _inline_review(gh, target, outcome) if outcome.status == "completed" else None
    if outcome.status == "completed" and on_posted is not None:
        await on_posted()
    # A failed review updates the summary too: the comment must not keep an older head's verdict.
    # The engine's summary starts with the marker, which upsert_comment puts first itself.
    body = outcome.summary.removeprefix(SUMMARY_MARKER).lstrip("\n")
    if refused:
        posted.notes.append(refused)
        body += _inline_in_summary(outcome)
    await upsert_comment(gh, owner, repo, number, marker=SUMMARY_MARKER, body=body, author=app_login)
    if outcome.status != "completed":
        return posted
    for decision in outcome.decisions:
        refused = await _carry_out(gh, target, decision)
        posted.decisions.append({**decision.to_json(), "refused": refused})
    return posted


async def _inline_review(gh: GitHubClient, target: Target, outcome: ReviewOutcome) -> str | None:
    """The review carrying the inline comments. Should GitHub refuse a comment's place (422),
    the findings are still in the summary comment and the check run: say so, go on."""
    review = outcome.review_request()
    if review is None:
        return None
    comments = [ReviewComment(c.path, c.line, c.body, side=c.side, start_line=c.start_line) for c in outcome.inline]
    try:
        await create_review(gh, target.owner, target.repo, target.number, commit_id=review["commit_id"],
                            event=review["event"], body=review["body"], comments=comments)
    except GitHubError as exc:
        if exc.status != 422:
            raise
        logger.warning("GitHub refused the inline comments: %s", exc.message)
        return (f"GitHub refused the inline comments (422): {exc.message}; they are in the summary comment "
                "instead")
    return None


def _inline_in_summary(outcome: ReviewOutcome) -> str:
    parts = [f"**`{c.path}` line {c.line}**\n\n{c.body}" for c in outcome.inline]
    return "\n\n### Findings GitHub did not place on the diff\n\n" + "\n\n".join(parts)


async def _carry_out(gh: GitHubClient, target: Target, decision: Decision) -> str | None:
    """Approve or dismiss as decided, logged either way; returns a note when GitHub refused."""
    if decision.kind == "approve":
        what = "approve"
        call = create_review(gh, target.owner, target.repo, target.number, event="APPROVE", body=decision.reason,
                             commit_id=decision.commit_id or target.head_sha)
    elif decision.kind == "dismiss" and decision.review_id is not None:
        what = f"dismiss review {decision.review_id}"
        call = dismiss_review(gh, target.owner, target.repo, target.number, decision.review_id, decision.reason)
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
