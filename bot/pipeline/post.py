"""Posting a finished review back to the pull request (I/O), best effort where GitHub may refuse.

One review carries the inline comments; the summary lives in one issue comment updated in place;
approvals and dismissals follow the engine's decisions. GitHub refuses some of these for reasons
that are not errors of ours (an app cannot approve a pull request it opened; a protected branch
may forbid dismissals): those are logged and shown in the check run, and the run goes on.
"""

from __future__ import annotations

import logging

from bot.engine.outcome import SUMMARY_MARKER, ReviewOutcome
from bot.github import GitHubClient, GitHubError, ReviewComment, create_review, dismiss_review, upsert_comment
from bot.pipeline.targets import Target

logger = logging.getLogger("reviewer.post")


async def post_outcome(gh: GitHubClient, target: Target, outcome: ReviewOutcome, app_login: str) -> list[str]:
    """Send what the outcome says; returns notes on what GitHub refused, for the check run."""
    notes: list[str] = []
    owner, repo, number = target.owner, target.repo, target.number
    if outcome.status != "completed":
        return notes
    await upsert_comment(gh, owner, repo, number, marker=SUMMARY_MARKER, body=outcome.summary, author=app_login)
    review = outcome.review_request()
    if review is not None:
        comments = [ReviewComment(c.path, c.line, c.body, side=c.side, start_line=c.start_line) for c in outcome.inline]
        await create_review(gh, owner, repo, number, commit_id=review["commit_id"], event=review["event"],
                            body=review["body"], comments=comments)
    for decision in outcome.decisions:
        try:
            if decision.kind == "approve":
                await create_review(gh, owner, repo, number, commit_id=decision.commit_id or target.head_sha,
                                    event="APPROVE", body=decision.reason)
            elif decision.kind == "dismiss" and decision.review_id is not None:
                await dismiss_review(gh, owner, repo, number, decision.review_id, decision.reason)
        except GitHubError as exc:
            if exc.status not in (403, 404, 422):
                raise
            what = "approve" if decision.kind == "approve" else f"dismiss review {decision.review_id}"
            logger.warning("GitHub refused to %s: %s", what, exc.message)
            notes.append(f"GitHub refused to {what} ({exc.status}): {exc.message}")
    return notes
