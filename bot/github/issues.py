"""Reading an issue a pull request links: the issue and its first comments (I/O).

Two calls at most per issue, each bounded: the issue itself, and one page of its first comments
(`per_page` of them, never every page). GitHub answers an issue number that is a pull request
with the pull request as an issue, `pull_request` set; telling the two apart is the caller's.
"""

from __future__ import annotations

from .client import GitHubClient


async def get_issue(gh: GitHubClient, owner: str, repo: str, number: int) -> dict:
    """`GET /repos/{owner}/{repo}/issues/{issue_number}`; raises GitHubError (404 when the
    installation cannot see it, 410 when issues are off or it was deleted, 301 when moved)."""
    return await gh.get("/repos/{owner}/{repo}/issues/{issue_number}",
                        {"owner": owner, "repo": repo, "issue_number": number})


async def first_comments(gh: GitHubClient, owner: str, repo: str, number: int, count: int) -> list[dict]:
    """The issue's first `count` comments (at most 100), oldest first: one page, one call."""
    page = await gh.get("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                        {"owner": owner, "repo": repo, "issue_number": number},
                        params={"per_page": max(1, min(count, 100))})
    return list(page)[:count] if isinstance(page, list) else []
