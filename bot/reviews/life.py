"""The pure decisions of a pull request's life: review again or not, and over what (docs/reviews.md
"Reviews over a pull request's life").

- A head is reviewed once: an event for a head already reviewed with the same plan (a label, an
  edit, a re-run) completes its check run as the review did, without asking the model.
- A new head whose previous reviewed head is its ancestor is reviewed incrementally: the model sees
  the changes since then. A force-push that dropped the reviewed head, a changed plan (new rules,
  another model, a label that changed what applies) or an explicit `full review` asks for a full one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bot.store.model import ReviewedHead

# Plan fields that name the pull request's files: they change with every push that adds a file,
# without changing how the pull request is reviewed.
_PER_FILE = ("files", "ignored")


def plan_digest(plan: Mapping[str, Any]) -> str:
    """What decides how a head is reviewed, as one digest: the plan without its file lists."""
    kept = {k: v for k, v in plan.items() if k not in _PER_FILE}
    kept["rules"] = [{k: v for k, v in r.items() if k != "matchedPaths"} for r in plan.get("rules", [])]
    kept["context"] = [{k: v for k, v in c.items() if k != "matchedPaths"} for c in plan.get("context", [])]
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Next:
    """What to do for one event: `repeat` the last review's check run, or review `full` or
    `incremental` (since `since`, once GitHub confirms it is an ancestor of the head)."""

    action: Literal["repeat", "full", "incremental"]
    since: str | None = None
    reason: str = ""


def next_review(last: ReviewedHead | None, head_sha: str, digest: str, *, merge_base: str = "",
                force: Literal["", "review", "full"] = "", incremental: bool = True) -> Next:
    """`force`: a `review` command reviews a head again (what changed, else the whole); `full
    review` reviews the whole. `incremental`: off, every new head gets a full review. A head
    whose merge base moved (the base branch was changed) has another diff: it is reviewed again."""
    if last is None:
        return Next("full", reason="no earlier review of this pull request")
    if force == "full":
        return Next("full", reason="a full review was asked for")
    if last.plan_digest != digest:
        return Next("full", reason="the plan changed since the last review")
    if last.head_sha == head_sha:
        if merge_base and last.merge_base and merge_base != last.merge_base:
            return Next("full", reason="the base changed since the last review")
        if force:
            return Next("full", reason="a review was asked for, and this head was reviewed before")
        return Next("repeat", reason=f"{head_sha[:7]} was already reviewed with this plan")
    if not incremental:
        return Next("full", reason="incremental reviews are off")
    return Next("incremental", since=last.head_sha, reason=f"the changes since {last.head_sha[:7]}")
