"""What the reviewer posted on a pull request before, read back from the pull request itself
(I/O: GitHub), for `reviewer review --post`, which has no database (docs/ci.md): the findings its
inline comments and its summary carry in hidden markers (bot/reviews/markers.py), and the state of
the last review that its summary comment carries. Only the reviewer's own comments are read: a
marker pasted into anyone else's comment counts for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.github import GitHubClient
from bot.github.comments import issue_comments, review_comments
from bot.reviews.fingerprints import PostedFinding
from bot.reviews.markers import PullState, all_posted, findings_in, state_in
from bot.reviews.output import SUMMARY_MARKER


@dataclass(frozen=True)
class History:
    posted: tuple[PostedFinding, ...] = ()  # every finding posted so far, each fingerprint once
    state: PullState | None = None  # the last review's, from the summary comment


def _ours(comment: dict, login: str) -> bool:
    return (comment.get("user") or {}).get("login") == login


async def read_history(gh: GitHubClient, owner: str, repo: str, number: int, login: str) -> History:
    inline = [findings_in(c.get("body") or "") for c in await review_comments(gh, owner, repo, number)
              if _ours(c, login)]
    summaries = [c for c in await issue_comments(gh, owner, repo, number)
                 if _ours(c, login) and SUMMARY_MARKER in (c.get("body") or "")]
    body = summaries[-1].get("body") or "" if summaries else ""
    state = state_in(body)
    # inline comments GitHub refused a place to are in the summary, their markers with them
    return History(tuple(all_posted([state], [*inline, findings_in(body)])), state)
