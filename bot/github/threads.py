"""A pull request's review threads (GraphQL: REST says nothing of whether a thread is resolved).

`review_threads` reads `repository.pullRequest.reviewThreads` page by page: each thread's node id,
whether it is resolved, and its comments' REST ids (`databaseId`) and authors; `resolve_thread`
sends `resolveReviewThread`. GitHub names an app's bot `<slug>` in GraphQL and `<slug>[bot]` in
REST: `ReviewThread.only_by` takes either.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .client import GitHubClient

PAGE = 50
MAX_PAGES = 40  # 2,000 threads: past that a pull request is not one a reviewer reads
MAX_COMMENTS = 100  # a thread's comments read; a longer thread has people in it anyway

THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $first: Int!, $comments: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          comments(first: $comments) {
            nodes { databaseId author { login } }
          }
        }
      }
    }
  }
}
"""

RESOLVE_MUTATION = """
mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) {
    thread { id isResolved }
  }
}
"""


@dataclass(frozen=True, slots=True)
class ReviewThread:
    id: str  # the GraphQL node id
    resolved: bool
    comment_ids: tuple[int, ...]  # REST ids, oldest first: the first is the thread's own comment
    authors: tuple[str, ...]  # the comments' authors' logins, as GraphQL gives them

    @property
    def root(self) -> int | None:
        return self.comment_ids[0] if self.comment_ids else None

    def only_by(self, login: str) -> bool:
        """Whether every comment is the app's (`<slug>[bot]`): no person has spoken in it."""
        ours = {login.lower(), login.lower().removesuffix("[bot]")}
        return bool(self.authors) and all(a.lower() in ours for a in self.authors)


async def review_threads(gh: GitHubClient, owner: str, repo: str, number: int) -> list[ReviewThread]:
    threads: list[ReviewThread] = []
    after = None
    for _ in range(MAX_PAGES):
        data = await gh.graphql(THREADS_QUERY, owner=owner, name=repo, number=number, first=PAGE,
                                comments=MAX_COMMENTS, after=after)
        page = (((data or {}).get("repository") or {}).get("pullRequest") or {}).get("reviewThreads") or {}
        threads += [_thread(node) for node in page.get("nodes") or () if isinstance(node, dict)]
        info = page.get("pageInfo") or {}
        if not info.get("hasNextPage") or not info.get("endCursor"):
            break
        after = info["endCursor"]
    return threads


def _thread(node: dict[str, Any]) -> ReviewThread:
    comments = [c for c in ((node.get("comments") or {}).get("nodes") or ()) if isinstance(c, dict)]
    ids = tuple(int(c["databaseId"]) for c in comments if isinstance(c.get("databaseId"), int))
    authors = tuple(str((c.get("author") or {}).get("login") or "") for c in comments)
    return ReviewThread(str(node.get("id")), bool(node.get("isResolved")), ids, authors)


async def resolve_thread(gh: GitHubClient, thread_id: str) -> bool:
    """Resolve one thread; whether GitHub says it is resolved now."""
    data = await gh.graphql(RESOLVE_MUTATION, write=True, threadId=thread_id)
    thread = (((data or {}).get("resolveReviewThread") or {}).get("thread") or {})
    return bool(thread.get("isResolved"))


def closable(threads: Iterable[ReviewThread], roots: Iterable[int], login: str) -> list[ReviewThread]:
    """The open threads started by the comments `roots` in which only the app (`login`) spoke."""
    wanted = set(roots)
    return [t for t in threads if t.root in wanted and not t.resolved and t.only_by(login)]
