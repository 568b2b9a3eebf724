"""What one review covers over a pull request's life: the whole pull request, or what changed since
the last review; and what the pull request already carries from earlier reviews.

The pipeline decides the scope (it knows the history); the engine only follows it, so that the
engine stays a function of plain data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from bot.reviews.fingerprints import PostedFinding


@dataclass(frozen=True)
class ReviewScope:
    kind: Literal["full", "incremental"] = "full"
    since: str | None = None  # incremental: the last reviewed head
    increment: tuple[Mapping, ...] = ()  # incremental: GitHub's file entries of since...head
    posted: tuple[PostedFinding, ...] = field(default=())  # every finding posted on the pull request so far
    # the posted findings people dismissed (a 👎, a learning, a thread resolved with no change to
    # their lines): never posted again, and no longer counted when the model makes them again
    dismissed: frozenset[str] = frozenset()

    @property
    def fingerprints(self) -> frozenset[str]:
        return frozenset(p.fingerprint for p in self.posted)


FULL = ReviewScope()
