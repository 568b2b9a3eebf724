"""Scoring one case: findings matched to the corpus's places, and the counts the figures add up.

A finding matches a `must_find` item when it is on the same path and its lines overlap the
item's (the place). With a judge model, each such pair is also put to the judge: a pair it
rejects does not match; a pair it could not judge (it failed, or left the pair out) still
matches by its place, and is counted as unjudged so that the report says so. Recall is the
share of items matched, precision the share of findings that match an item, quiet the share of
`must_not` places without any finding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Literal

from bot.eval.corpus import Place

SEVERITIES = ("blocking", "important", "minor", "nit")
Verdict = Literal["confirmed", "rejected", "unjudged"]


@dataclass(frozen=True, slots=True)
class Found:
    """A finding the review posted, as it is scored."""

    path: str
    start_line: int
    end_line: int
    severity: str
    category: str
    message: str

    def to_json(self) -> dict:
        return {"path": self.path, "startLine": self.start_line, "endLine": self.end_line,
                "severity": self.severity, "category": self.category, "message": self.message}


def at(place: Place, found: Found) -> bool:
    """Whether `found` is at `place`: the same path, and overlapping lines (any, for a whole file)."""
    if place.path != found.path:
        return False
    if place.lines is None:
        return True
    first, last = place.lines
    return found.start_line <= last and first <= found.end_line


def candidate_pairs(items: Sequence[Place], findings: Sequence[Found]) -> list[tuple[int, int]]:
    """(item, finding) index pairs at the same place: what a judge is asked about."""
    return [(i, f) for i, item in enumerate(items) for f, found in enumerate(findings) if at(item, found)]


@dataclass(frozen=True, slots=True)
class Match:
    finding: int
    verdict: Verdict | None  # None: no judge was asked


@dataclass(frozen=True, slots=True)
class CaseScore:
    items: tuple[tuple[Match, ...], ...]  # per must_find item: the findings that match it
    rejected: tuple[tuple[int, ...], ...]  # per item: findings at its place that the judge rejected
    quiet: tuple[tuple[int, ...], ...]  # per must_not place: the findings at it (empty: quiet)
    matched_findings: tuple[tuple[int, ...], ...]  # per finding: the items it matches

    @property
    def found(self) -> int:
        return sum(1 for matches in self.items if matches)

    @property
    def matched(self) -> int:
        return sum(1 for items in self.matched_findings if items)

    @property
    def quiet_places(self) -> int:
        return sum(1 for found in self.quiet if not found)


def score_case(items: Sequence[Place], must_not: Sequence[Place], findings: Sequence[Found],
               verdicts: Mapping[tuple[int, int], bool | None] | None = None) -> CaseScore:
    """`verdicts`: the judge's answer per candidate pair (True: about the item; False: not; None or
    absent: not judged); None when there is no judge."""
    matches: list[list[Match]] = [[] for _ in items]
    rejected: list[list[int]] = [[] for _ in items]
    per_finding: list[list[int]] = [[] for _ in findings]
    for item, finding in candidate_pairs(items, findings):
        verdict: Verdict | None = None
        if verdicts is not None:
            said = verdicts.get((item, finding))
            verdict = "unjudged" if said is None else "confirmed" if said else "rejected"
        if verdict == "rejected":
            rejected[item].append(finding)
            continue
        matches[item].append(Match(finding, verdict))
        per_finding[finding].append(item)
    quiet = [tuple(f for f, found in enumerate(findings) if at(place, found)) for place in must_not]
    return CaseScore(tuple(tuple(m) for m in matches), tuple(tuple(r) for r in rejected), tuple(quiet),
                     tuple(tuple(i) for i in per_finding))


@dataclass(frozen=True, slots=True)
class Cost:
    calls: int = 0
    tool_rounds: int = 0
    prompt_tokens: int = 0
    answer_tokens: int = 0
    unreported: int = 0  # answers without token counts
    money: float | None = None  # None: no model of the review declares a price
    unpriced: int = 0  # answered calls of models without a price (not in `money`)

    def to_json(self) -> dict:
        return {"calls": self.calls, "toolRounds": self.tool_rounds, "promptTokens": self.prompt_tokens,
                "answerTokens": self.answer_tokens, "unreported": self.unreported, "money": self.money,
                "unpriced": self.unpriced}


@dataclass(frozen=True, slots=True)
class Tally:
    """What one case adds to the overall figures. Sums of tallies are tallies: the overall figures,
    and each bootstrap resample's, are the figures of a sum."""

    cases: int = 0
    items: int = 0
    found: int = 0
    findings: int = 0
    matched: int = 0
    places: int = 0
    quiet: int = 0
    blocking: int = 0
    important: int = 0
    minor: int = 0
    nit: int = 0
    calls: int = 0
    tool_rounds: int = 0
    prompt_tokens: int = 0
    answer_tokens: int = 0
    unreported: int = 0
    money: float = 0.0
    unpriced_cases: int = 0  # cases whose cost has no money figure
    seconds: float = 0.0

    def __add__(self, other: Tally) -> Tally:
        return Tally(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(Tally)))

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(Tally)}

    @classmethod
    def from_json(cls, data: Mapping) -> Tally:
        """A tally of a saved report (`--baseline`); raises KeyError/TypeError/ValueError when it is not one."""
        values: list = []
        for f in fields(Tally):
            value = data[f.name]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{f.name} is not a number")
            values.append(float(value) if f.type in ("float", float) else int(value))
        return cls(*values)


def tally(score: CaseScore, items: int, places: int, findings: Sequence[Found], cost: Cost,
          seconds: float) -> Tally:
    by = {s: sum(1 for f in findings if f.severity == s) for s in SEVERITIES}
    return Tally(1, items, score.found, len(findings), score.matched, places, score.quiet_places,
                 by["blocking"], by["important"], by["minor"], by["nit"], cost.calls, cost.tool_rounds,
                 cost.prompt_tokens, cost.answer_tokens, cost.unreported, cost.money or 0.0,
                 1 if cost.money is None else 0, seconds)


def total(tallies: Sequence[Tally]) -> Tally:
    out = Tally()
    for one in tallies:
        out = out + one
    return out


def ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


Figure = Callable[[Tally], "float | None"]

# name → (what it is, how it is computed from a total, whether higher is better: True/False/None)
FIGURES: dict[str, tuple[str, Figure, bool | None]] = {
    "recall": ("must-find items matched", lambda t: ratio(t.found, t.items), True),
    "precision": ("findings that match an item", lambda t: ratio(t.matched, t.findings), True),
    "quiet": ("must-not places without a finding", lambda t: ratio(t.quiet, t.places), True),
    "findings": ("findings posted", lambda t: t.findings, None),
    "minorShare": ("findings that are minor or nit", lambda t: ratio(t.minor + t.nit, t.findings), False),
    "calls": ("model calls", lambda t: t.calls, False),
    "toolRounds": ("tool rounds", lambda t: t.tool_rounds, False),
    "promptTokens": ("prompt tokens", lambda t: t.prompt_tokens, False),
    "answerTokens": ("answer tokens", lambda t: t.answer_tokens, False),
    "money": ("money (declared prices)", lambda t: None if t.unpriced_cases or not t.cases else t.money, False),
    "seconds": ("review wall time, seconds", lambda t: t.seconds, False),
}


def figures(t: Tally) -> dict[str, float | None]:
    return {name: compute(t) for name, (_, compute, _) in FIGURES.items()}
