"""The console's chart of the resolution rate over time, as server-rendered SVG (pure).

One line per series (a repository or an account): the share of the findings posted in each week
that were resolved, 0 to 100 %. A week with nothing posted has no point, and the line breaks there.
Every text in the SVG is escaped: names come from GitHub and the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from bot.learnings.tally import RatePoint

WIDTH, HEIGHT, PAD = 560, 160, 32
COLOURS = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989")


@dataclass(frozen=True)
class Series:
    name: str
    points: tuple[RatePoint, ...]  # one per week, in order, the same weeks for every series


def rate_chart(series: Sequence[Series], title: str) -> str:
    """An `<svg>` of the series' resolution rates ("" when there is no week to show)."""
    weeks = max((len(s.points) for s in series), default=0)
    if not weeks:
        return ""
    step = (WIDTH - 2 * PAD) / max(weeks - 1, 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="{WIDTH}" height="{HEIGHT}" class="chart"><title>{escape(title)}</title>',
             f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" stroke="#888"/>',
             f'<text x="2" y="{PAD + 4}" font-size="10">100%</text>',
             f'<text x="2" y="{HEIGHT - PAD + 4}" font-size="10">0%</text>']
    first = series[0].points
    for index in (0, weeks - 1):
        x = PAD + index * step
        parts.append(f'<text x="{x:.1f}" y="{HEIGHT - 8}" font-size="10" text-anchor="middle">'
                     f'{escape(first[index].start.isoformat())}</text>')
    for number, one in enumerate(series):
        colour = COLOURS[number % len(COLOURS)]
        for run in _runs(one.points):
            coords = " ".join(f"{PAD + i * step:.1f},{_y(p.rate):.1f}" for i, p in run)
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coords}"/>')
            for i, p in run:
                parts.append(f'<circle cx="{PAD + i * step:.1f}" cy="{_y(p.rate):.1f}" r="3" fill="{colour}">'
                             f'<title>{escape(one.name)}, week of {p.start.isoformat()}: {p.resolved} of {p.posted} '
                             f'resolved</title></circle>')
        parts.append(f'<text x="{WIDTH - PAD + 4}" y="{PAD + 12 * number}" font-size="10" fill="{colour}">'
                     f'{escape(one.name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _y(rate: float | None) -> float:
    return HEIGHT - PAD - (rate or 0.0) * (HEIGHT - 2 * PAD)


def _runs(points: Sequence[RatePoint]) -> list[list[tuple[int, RatePoint]]]:
    """The points with a rate, in runs of consecutive weeks."""
    runs: list[list[tuple[int, RatePoint]]] = []
    current: list[tuple[int, RatePoint]] = []
    for index, point in enumerate(points):
        if point.rate is None:
            if current:
                runs.append(current)
            current = []
        else:
            current.append((index, point))
    if current:
        runs.append(current)
    return runs
