"""Noise caps on a review's inline comments (pure; the admin file's `reviews`, docs/configuration.md).

Two limits, applied after placement (a finding that could go inline) and before posting:
- a floor of severity (`inlineSeverityFloor`): a finding below it is listed in the summary only;
- at most `maxInlineComments` inline comments a review: past it, findings move to the summary
  lowest severity first, and of one severity the model's later ones first.
Nothing is dropped: a finding moved is listed in the summary, and the summary says why and how many.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.reviews.findings import SEVERITIES

RANK = {severity: len(SEVERITIES) - index for index, severity in enumerate(SEVERITIES)}  # blocking highest


@dataclass(frozen=True)
class Caps:
    max_inline: int | None = None  # None: no cap
    floor: str = "nit"  # the lowest severity posted inline


@dataclass(frozen=True)
class Capped:
    inline: tuple[bool, ...]  # per finding, in the order given
    below_floor: int
    over_cap: int
    caps: Caps

    def notes(self) -> list[str]:
        """What the summary says about the findings the caps moved to it."""
        out = []
        if self.below_floor:
            out.append(f"{_findings(self.below_floor)} below the inline floor ({self.caps.floor}) "
                       f"{'is' if self.below_floor == 1 else 'are'} listed in this summary only")
        if self.over_cap:
            out.append(f"{_findings(self.over_cap)} past the limit of {self.caps.max_inline} inline comments a review "
                       f"{'is' if self.over_cap == 1 else 'are'} listed in this summary only (the lowest severities "
                       "first)")
        return out


def _findings(count: int) -> str:
    return f"{count} finding{'s' if count != 1 else ''}"


def cap_inline(placed: Sequence[tuple[str, bool]], caps: Caps) -> Capped:
    """`placed`: each finding's severity and whether it was placed inline; the flags after the caps."""
    floor = RANK.get(caps.floor, 0)
    inline = [bool(flag) for _, flag in placed]
    below = 0
    for index, (severity, _) in enumerate(placed):
        # The lowest floor is no floor: a severity we do not know (rank 0) moves only under a higher one.
        if inline[index] and floor > min(RANK.values()) and RANK.get(severity, 0) < floor:
            inline[index], below = False, below + 1
    over = 0
    if caps.max_inline is not None:
        kept = [index for index, flag in enumerate(inline) if flag]
        excess = len(kept) - caps.max_inline
        if excess > 0:
            for index in sorted(kept, key=lambda i: (RANK.get(placed[i][0], 0), -i))[:excess]:
                inline[index] = False
            over = excess
    return Capped(tuple(inline), below, over, caps)
