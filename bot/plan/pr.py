"""The `pr` object of CEL expressions, built from what the server or the CLI knows.

The server has GitHub's pull request object and the webhook's action; `reviewer plan` has git
(and, with `--pr FILE`, a pull request object saved from the API). Both end in `clamp_pr`, so
every `pr` has every field of `PR_FIELDS`, of its type, within the limits the CEL bounds assume.
`files` is every changed path, ignored ones included, in the pull request's order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.expr.pr_fields import EVENTS, clamp_pr

__all__ = ["EVENTS", "GitFacts", "pr_from_git", "pr_from_github"]


def _dig(data: Mapping[str, Any] | None, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _labels(items: Any) -> list[dict]:
    return [{"name": item.get("name") or "", "color": item.get("color") or ""}
            for item in items or () if isinstance(item, Mapping)]


def pr_from_github(pull_request: Mapping[str, Any], event: str, changed: Sequence[str]) -> dict:
    """`pull_request` as the REST API and webhooks give it; `event` the webhook action (or
    `rerequested`, `manual`); `changed` the changed paths (deleted included, renamed as new)."""
    head_repo = _dig(pull_request, "head", "repo", "full_name")
    base_repo = _dig(pull_request, "base", "repo", "full_name")
    state = pull_request.get("state") or "open"
    return clamp_pr({
        "number": pull_request.get("number"),
        "title": pull_request.get("title"),
        "body": pull_request.get("body") or "",
        "author": _dig(pull_request, "user", "login"),
        "state": state,
        "open": state == "open",
        "merged": bool(pull_request.get("merged") or pull_request.get("merged_at")),
        "draft": bool(pull_request.get("draft")),
        # A deleted fork leaves `head.repo` null: it was not the base repository either.
        "fork": head_repo != base_repo if base_repo else False,
        "headRef": _dig(pull_request, "head", "ref"),
        "headSha": _dig(pull_request, "head", "sha"),
        "baseRef": _dig(pull_request, "base", "ref"),
        "url": pull_request.get("html_url"),
        "createdAt": pull_request.get("created_at"),
        "labels": _labels(pull_request.get("labels")),
        "event": event,
        "files": list(changed),
        "additions": pull_request.get("additions"),
        "deletions": pull_request.get("deletions"),
        "changedFiles": pull_request.get("changed_files", len(changed)),
        "commits": pull_request.get("commits"),
        "authorAssociation": pull_request.get("author_association"),
    })


@dataclass(frozen=True, slots=True)
class GitFacts:
    """What `reviewer plan` reads from git about the head commit and the range merge base → head."""

    head_sha: str
    message: str  # the head commit's full message
    author: str  # its author's name
    date: str  # its author date, ISO 8601
    commits: int  # merge base → head
    additions: int
    deletions: int


def pr_from_git(facts: GitFacts, base_ref: str, head_ref: str, changed: Sequence[str]) -> dict:
    """docs/plan.md's offline `pr`: number 0, event `manual`, title and body from the head commit."""
    title, _, body = facts.message.strip("\n").partition("\n")
    return clamp_pr({
        "number": 0, "title": title.strip(), "body": body.strip("\n"), "author": facts.author,
        "state": "open", "open": True, "merged": False, "draft": False, "fork": False,
        "headRef": head_ref, "headSha": facts.head_sha, "baseRef": base_ref, "url": "",
        "createdAt": facts.date, "labels": [], "event": "manual", "files": list(changed),
        "additions": facts.additions, "deletions": facts.deletions, "changedFiles": len(changed),
        "commits": facts.commits, "authorAssociation": "NONE",
    })
