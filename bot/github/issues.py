"""Reading the issues a pull request links (I/O): which it closes, the issue and its first comments.

`closing_issues` asks GraphQL's `closingIssuesReferences` of the pull request (the issues its
Development sidebar links, and those GitHub read from its body), one page. Then two calls at most
per issue, each bounded: the issue itself, and one page of its first comments (`per_page` of them,
never every page). GitHub answers an issue number that is a pull request with the pull request as
an issue, `pull_request` set; telling the two apart is the caller's.
"""

from __future__ import annotations

from .client import GitHubClient

CLOSING_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $first: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      closingIssuesReferences(first: $first) {
        nodes { number repository { nameWithOwner } }
      }
    }
  }
}
"""


async def closing_issues(gh: GitHubClient, owner: str, repo: str, number: int, first: int) -> list[tuple[str, int]]:
    """(`owner/name`, number) of the first `first` (1–100) issues GitHub says the pull request
    closes; raises GitHubError."""
    data = await gh.graphql(CLOSING_QUERY, owner=owner, name=repo, number=number, first=max(1, min(first, 100)))
    pull = ((data or {}).get("repository") or {}).get("pullRequest") or {}
    out = []
    for node in (pull.get("closingIssuesReferences") or {}).get("nodes") or ():
        name = ((node or {}).get("repository") or {}).get("nameWithOwner") if isinstance(node, dict) else None
        if isinstance(name, str) and "/" in name and isinstance(node.get("number"), int):
            out.append((name, node["number"]))
    return out


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
