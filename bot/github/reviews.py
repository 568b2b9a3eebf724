"""Reviews and the app's one summary comment on a pull request.

Approving and dismissing are best effort on GitHub (an app cannot approve a pull request it
opened; a protected branch may refuse a dismissal): these functions raise `GitHubError` with
GitHub's status and message, and the caller decides to log and go on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .client import GitHubClient
from .limits import COMMENT_BODY_CHARS, fit

EVENTS = ("COMMENT", "APPROVE", "REQUEST_CHANGES")


@dataclass(frozen=True)
class ReviewComment:
    """An inline comment: on `line` of the new file (side RIGHT) or of the old one (LEFT),
    spanning from `start_line` when given. The line must be part of the pull request's diff."""

    path: str
    line: int
    body: str
    side: str = "RIGHT"
    start_line: int | None = None

    def to_github(self) -> dict:
        out = {"path": self.path, "line": self.line, "side": self.side, "body": fit(self.body, COMMENT_BODY_CHARS)}
        if self.start_line is not None and self.start_line < self.line:
            out.update(start_line=self.start_line, start_side=self.side)
        return out


def _pull(owner: str, repo: str, pull_number: int) -> dict:
    return {"owner": owner, "repo": repo, "pull_number": pull_number}


async def create_review(gh: GitHubClient, owner: str, repo: str, pull_number: int, *, commit_id: str, event: str,
                        body: str = "", comments: Sequence[ReviewComment] = (), resend_unanswered: bool = True) -> dict:
    """Submit a review on `commit_id` (the head the review looked at) with its inline comments.
    `resend_unanswered=False`: not sent again after a 5xx or no answer (GitHubClient.post)."""
    if event not in EVENTS:
        raise ValueError(f"review event {event!r} is not one of {EVENTS}")
    data: dict = {"commit_id": commit_id, "event": event}
    if body:
        data["body"] = fit(body, COMMENT_BODY_CHARS)
    if comments:
        data["comments"] = [c.to_github() for c in comments]
    return await gh.post("/repos/{owner}/{repo}/pulls/{pull_number}/reviews", _pull(owner, repo, pull_number), data=data,
                         resend_unanswered=resend_unanswered)


async def list_reviews(gh: GitHubClient, owner: str, repo: str, pull_number: int) -> list[dict]:
    """Every review of the pull request, oldest first (`user.login`, `state`, `commit_id`, `id`)."""
    return await gh.get_all("/repos/{owner}/{repo}/pulls/{pull_number}/reviews", _pull(owner, repo, pull_number))


async def dismiss_review(gh: GitHubClient, owner: str, repo: str, pull_number: int, review_id: int, message: str) -> dict:
    return await gh.put("/repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/dismissals",
                        {**_pull(owner, repo, pull_number), "review_id": review_id},
                        data={"message": fit(message, COMMENT_BODY_CHARS), "event": "DISMISS"})


async def upsert_comment(gh: GitHubClient, owner: str, repo: str, issue_number: int, *, marker: str, body: str,
                         author: str) -> dict:
    """Create or update the one comment of `author` (the app's bot login) that carries `marker`.

    `marker` is a hidden HTML comment (`<!-- reviewer:summary -->`) put first in the body. Only
    the app's own comments are considered, so a person quoting the marker is never overwritten,
    and an unchanged body is not written again.
    """
    text = f"{marker}\n{fit(body, COMMENT_BODY_CHARS - len(marker) - 1)}"
    comments = await gh.get_all("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                                {"owner": owner, "repo": repo, "issue_number": issue_number})
    for comment in comments:
        if (comment.get("user") or {}).get("login") == author and marker in (comment.get("body") or ""):
            if comment["body"] == text:
                return comment
            return await gh.patch("/repos/{owner}/{repo}/issues/comments/{comment_id}",
                                  {"owner": owner, "repo": repo, "comment_id": comment["id"]}, data={"body": text})
    return await gh.post("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                         {"owner": owner, "repo": repo, "issue_number": issue_number}, data={"body": text})
