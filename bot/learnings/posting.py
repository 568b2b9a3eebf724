"""A review's outcome as it is posted (pure): the noise caps move inline comments to the summary,
and the summary ends with the pull request's tally (docs/reviews.md "Learnings").

- `capped`: the admin file's `reviews.maxInlineComments` and `reviews.inlineSeverityFloor`
  (`bot.learnings.caps`) over the review's inline comments; each comment moved is listed in the
  summary under "Listed here only", with the caps' notes saying why and how many.
- `with_tally`: "**Findings of this pull request so far:** 3 findings: 1 resolved, 1 dismissed,
  1 open" at the end of the summary.
"""

from __future__ import annotations

from dataclasses import replace

from bot.learnings.caps import Caps, cap_inline
from bot.learnings.tally import Tally
from bot.reviews.output import ReviewOutput

TALLY_LABEL = "**Findings of this pull request so far:**"


def capped(outcome: ReviewOutput, caps: Caps) -> tuple[ReviewOutput, list[str]]:
    """The outcome with its inline comments within the caps, and the notes saying what moved."""
    if not outcome.inline:
        return outcome, []
    severity = {(f.path, f.end_line, f.start_line if f.start_line != f.end_line else None): f.severity
                for f in outcome.findings}
    placed = [(severity.get((c.path, c.line, c.start_line), ""), True) for c in outcome.inline]
    result = cap_inline(placed, caps)
    notes = result.notes()
    if not notes:
        return outcome, []
    kept = tuple(c for c, inline in zip(outcome.inline, result.inline, strict=True) if inline)
    moved = [c for c, inline in zip(outcome.inline, result.inline, strict=True) if not inline]
    listed = "\n\n".join(f"**`{c.path}` line {c.line}**\n\n{c.body}" for c in moved)
    said = "\n".join(f"- {note}" for note in notes)
    summary = f"{outcome.summary}\n\n### Listed here only\n\n{said}\n\n{listed}"
    return replace(outcome, inline=kept, summary=summary), notes


def with_tally(outcome: ReviewOutput, counted: Tally) -> ReviewOutput:
    if not counted.total:
        return outcome
    return replace(outcome, summary=f"{outcome.summary}\n\n{TALLY_LABEL} {counted.line()}")


def retallied(summary: str, counted: Tally) -> str | None:
    """The summary comment with its tally line brought up to date; None when it has none to update
    (a summary from before learnings, or one of a review that posted nothing)."""
    lines = summary.split("\n")
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].startswith(TALLY_LABEL):
            lines[index] = f"{TALLY_LABEL} {counted.line()}"
            return "\n".join(lines)
    return None
