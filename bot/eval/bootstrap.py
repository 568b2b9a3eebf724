"""Differences between two runs over the same cases, with a 95% interval by paired bootstrap.

The cases are resampled with replacement, the same resample for both runs (that is the pairing: a
hard case stays hard on both sides), and each figure's difference is computed on every resample;
the interval is the 2.5th and 97.5th percentiles of those differences. The generator is seeded and
the cases are taken in the order given, so that the same runs always give the same intervals.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import astuple, dataclass

from bot.eval.score import FIGURES, Tally, figures, total

RESAMPLES = 2000
SEED = 25  # any fixed number: the interval must not change from one run of the same reports to the next
LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Difference:
    delta: float | None  # second minus first, on every case; None where either figure is undefined
    low: float | None
    high: float | None

    def to_json(self) -> dict:
        return {"delta": self.delta, "low": self.low, "high": self.high}

    @property
    def drop(self) -> bool:
        """The whole interval is below zero: a fall the resampling does not explain away."""
        return self.high is not None and self.high < 0


def _percentile(ordered: Sequence[float], share: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    position = share * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def _summed(rows: list[tuple]) -> Tally:
    """The total of tallies given as tuples: a column sum in C, the loop that matters here."""
    return Tally(*(sum(column) for column in zip(*rows, strict=True)))


def _minus(second: float | None, first: float | None) -> float | None:
    return None if second is None or first is None else second - first


def paired(first: Sequence[Tally], second: Sequence[Tally], resamples: int = RESAMPLES,
           seed: int = SEED) -> dict[str, Difference]:
    """Each figure's difference (second − first) over the paired cases `first[i]`, `second[i]`."""
    if len(first) != len(second):
        raise ValueError("paired runs need the same cases")
    deltas = {name: _minus(b, a) for (name, b), a in zip(figures(total(second)).items(),
                                                          figures(total(first)).values(), strict=True)}
    spread: dict[str, list[float]] = {name: [] for name in FIGURES}
    rng = random.Random(seed)
    count = len(first)
    rows_a, rows_b = [astuple(t) for t in first], [astuple(t) for t in second]
    for _ in range(resamples if count else 0):
        picks = [rng.randrange(count) for _ in range(count)]
        a = figures(_summed([rows_a[i] for i in picks]))
        b = figures(_summed([rows_b[i] for i in picks]))
        for name in FIGURES:
            diff = _minus(b[name], a[name])
            if diff is not None:
                spread[name].append(diff)
    tail = (1 - LEVEL) / 2
    out = {}
    for name in FIGURES:
        ordered = sorted(spread[name])
        if deltas[name] is None or not ordered:
            out[name] = Difference(deltas[name], None, None)
        else:
            out[name] = Difference(deltas[name], _percentile(ordered, tail), _percentile(ordered, 1 - tail))
    return out
