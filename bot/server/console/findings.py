"""What the console can say about a pull request's findings: those posted, and what became of them.

The review memory (bot/store/reviews.py) keeps each finding posted on a pull request — its place,
words, severity and the head it was posted at — so that a later review does not post it again.
It records nothing yet of a finding's later fate (resolved in a later commit, dismissed by a
reply or a 👎): `fate_of` is the one place that says what is known, so that when the store records
fates, the pages show them by changing this function alone. Until then every finding's fate is
that it was posted, at its head.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.reviews.fingerprints import PostedFinding
from bot.reviews.memory import ReviewMemory


@dataclass(frozen=True)
class ShownFinding:
    path: str
    severity: str
    category: str
    message: str
    head_sha: str
    fate: str  # what became of it, as far as the store knows: "posted" today


def fate_of(finding: PostedFinding) -> str:
    """What became of a posted finding, as far as the store records it: that it was posted (the
    memory keeps no later fate yet)."""
    return "posted"


async def findings_of(memory: ReviewMemory, pull: str) -> list[ShownFinding]:
    """The findings posted on `pull` (`owner/repo#number`), oldest first, each with its fate."""
    return [ShownFinding(f.path, f.severity, f.category, f.message, f.head_sha, fate_of(f))
            for f in await memory.posted(pull)]
