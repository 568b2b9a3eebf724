"""Posting a finished review back to the pull request (I/O), best effort where GitHub may refuse.

One review carries the inline comments; the summary lives in one issue comment updated in place;
approvals and dismissals follow the engine's decisions. GitHub refuses some of these for reasons
that are not errors of ours (an app cannot approve a pull request it opened; a protected branch
may forbid dismissals): those are logged and shown in the check run, and the run goes on.
"""

from __future__ import annotations

import logging

from bot.engine.outcome import SUMMARY_MARKER, Decision, ReviewOutcome
from bot.github import GitHubClient, GitHubError, ReviewComment, create_review, dismiss_review, upsert_comment
from bot.pipeline.targets import Target

logger = logging.getLogger("reviewer.post")


async def post_outcome(gh: GitHubClient, target: Target, outcome: ReviewOutcome, app_login: str) -> list[str]:
    """Send what the outcome says; returns notes on what GitHub refused, for the check run."""
    notes: list[str] = []
    owner, repo, number = target.owner, target.repo, target.number
    if outcome.status == "skipped":
        return notes
    # A failed review updates the summary too: the comment must not keep an older head's verdict.
    # The engine's summary starts with the marker, which upsert_comment puts first itself.
    body = outcome.summary.removeprefix(SUMMARY_MARKER).lstrip("\n")
    await upsert_comment(gh, owner, repo, number, marker=SUMMARY_MARKER, body=body, author=app_login)
    if outcome.status != "completed":
        return notes
    review = outcome.review_request()
    if review is not None:
        comments = [ReviewComment(c.path, c.line, c.body, side=c.side, start_line=c.start_line) for c in outcome.inline]
        await create_review(gh, owner, repo, number, commit_id=review["commit_id"], event=review["event"],
                            body=review["body"], comments=comments)
    for decision in outcome.decisions:
        refused = await _carry_out(gh, target, decision)
        if refused:
            notes.append(refused)
    return notes


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
