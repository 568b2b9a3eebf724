"""A review's summary ends with the pull request's tally (pure; docs/reviews.md "Learnings"):
"**Findings of this pull request so far:** 3 findings: 1 resolved, 1 dismissed, 1 open", the
model's and the analyzers' alike. (The noise caps that once lived here are the head's ledger's one
noise budget now: bot/reviews/ledger.py.)
"""

from __future__ import annotations

from dataclasses import replace

from bot.learnings.tally import Tally
from bot.reviews.output import ReviewOutput

TALLY_LABEL = "**Findings of this pull request so far:**"


def with_tally(output: ReviewOutput, counted: Tally) -> ReviewOutput:
    if not counted.total:
        return output
    return replace(output, summary=f"{output.summary}\n\n{TALLY_LABEL} {counted.line()}")


def retallied(summary: str, counted: Tally) -> str | None:
    """The summary comment with its tally line brought up to date; None when it has none to update
    (a summary from before learnings, or one of a review that posted nothing)."""
    lines = summary.split("\n")
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(TALLY_LABEL):
            lines[index] = f"{TALLY_LABEL} {counted.line()}"
            return "\n".join(lines)
    return None
