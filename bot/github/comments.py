"""A pull request's comments on GitHub: review comment threads, issue comments (its conversation
tab), and who may write.

Follow-ups read the thread a reply belongs to, answer in it (or on the pull request), and ask
GitHub whether the person who wrote has write access to the repository.
"""

from __future__ import annotations

from .client import GitHubClient
from .errors import GitHubError
from .limits import COMMENT_BODY_CHARS, fit

WRITERS = frozenset({"admin", "write"})  # `permission` folds maintain into write


async def review_comments(gh: GitHubClient, owner: str, repo: str, pull_number: int) -> list[dict]:
    """Every review comment of the pull request, oldest first (`in_reply_to_id` marks replies)."""
    return await gh.get_all("/repos/{owner}/{repo}/pulls/{pull_number}/comments",
                            {"owner": owner, "repo": repo, "pull_number": pull_number})


async def reply_in_thread(gh: GitHubClient, owner: str, repo: str, pull_number: int, root_id: int,
                          body: str, resend_unanswered: bool = True) -> dict:
    """A reply in the review thread whose first comment is `root_id` (GitHub takes no reply to a reply)."""
    return await gh.post("/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
                         {"owner": owner, "repo": repo, "pull_number": pull_number, "comment_id": root_id},
                         data={"body": fit(body, COMMENT_BODY_CHARS)}, resend_unanswered=resend_unanswered)


async def create_comment(gh: GitHubClient, owner: str, repo: str, issue_number: int, body: str,
                         resend_unanswered: bool = True) -> dict:
    return await gh.post("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                         {"owner": owner, "repo": repo, "issue_number": issue_number},
                         data={"body": fit(body, COMMENT_BODY_CHARS)}, resend_unanswered=resend_unanswered)


async def issue_comments(gh: GitHubClient, owner: str, repo: str, issue_number: int) -> list[dict]:
    """Every comment on the pull request's conversation, oldest first."""
    return await gh.get_all("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                            {"owner": owner, "repo": repo, "issue_number": issue_number})


async def can_write(gh: GitHubClient, owner: str, repo: str, username: str) -> bool:
    """Whether `username` has write access (admin, maintain or write); an unknown user has none."""
    try:
        data = await gh.get("/repos/{owner}/{repo}/collaborators/{username}/permission",
                            {"owner": owner, "repo": repo, "username": username})
    except GitHubError as exc:
        if exc.status == 404:
            return False
        raise
    return data.get("permission") in WRITERS
