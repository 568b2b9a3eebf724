"""A posted finding as the store keeps it, followed to its outcome (pure shapes and JSON).

`Followed` is one finding the app posted on a pull request: the `outcomes.Tracked` record that
follows its lines, plus what a learning made from it needs (its message, its rules and category)
and the id of its inline comment (None when it went to the summary only, or before the comment's
id was read back from GitHub). `state` and `decided_at` are `outcomes.outcome(tracked)`'s, kept in
their own columns so that the console and /metrics count without reading every body.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, cast

from bot.learnings.capture import FindingRef
from bot.learnings.model import format_time, parse_time
from bot.learnings.outcomes import Mark, State, Tracked, outcome


@dataclass(frozen=True)
class Followed:
    pull: str  # `owner/repo#number`, the queue's key
    account: str
    repository: str  # the name within the account
    tracked: Tracked
    message: str
    severity: str = "minor"
    comment_id: int | None = None
    comment_url: str | None = None  # the inline comment's page, a learning's source
    code: str = ""  # its lines as the diff showed them when posted (bot.reviews.fingerprints.code_of)

    @property
    def state(self) -> State:
        return outcome(self.tracked).state

    @property
    def decided_at(self) -> datetime | None:
        return outcome(self.tracked).at

    def finding(self) -> FindingRef:
        """The finding as a learning made from it reads it."""
        t = self.tracked
        return FindingRef(t.path, self.message, t.rules, t.category, t.fingerprint)

    def with_tracked(self, tracked: Tracked) -> Followed:
        return replace(self, tracked=tracked)

    def body(self) -> dict[str, Any]:
        t = self.tracked
        return {"fingerprint": t.fingerprint, "path": t.path, "startLine": t.start_line, "endLine": t.end_line,
                "headSha": t.head_sha, "postedAt": format_time(t.posted_at), "rules": list(t.rules),
                "category": t.category, "changed": _mark(t.changed), "dismissed": _mark(t.dismissed),
                "threadResolved": _mark(t.thread_resolved), "message": self.message, "severity": self.severity,
                "commentUrl": self.comment_url, "code": self.code}


def from_body(pull: str, account: str, repository: str, comment_id: int | None, body: Mapping[str, Any]) -> Followed:
    """What `Followed.body` wrote (the store's rows are ours: a KeyError is a bug to see)."""
    tracked = Tracked(str(body["fingerprint"]), str(body["path"]), int(body["startLine"]), int(body["endLine"]),
                      str(body["headSha"]), parse_time(str(body["postedAt"])), tuple(body.get("rules") or ()),
                      str(body.get("category") or "other"), _unmark(body.get("changed")),
                      _unmark(body.get("dismissed")), _unmark(body.get("threadResolved")))
    url = body.get("commentUrl")
    return Followed(pull, account, repository, tracked, str(body.get("message") or ""),
                    str(body.get("severity") or "minor"), comment_id, str(url) if url else None,
                    str(body.get("code") or ""))


def _mark(mark: Mark | None) -> dict[str, str] | None:
    return None if mark is None else {"at": format_time(mark.at), "by": mark.by, "how": mark.how}


def _unmark(data: Any) -> Mark | None:
    if not isinstance(data, Mapping):
        return None
    return Mark(parse_time(str(data["at"])), str(data["by"]), cast(Any, data["how"]))
