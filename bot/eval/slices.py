"""Recall, precision and quiet sliced by tag: a benchmark's items keep their category, context
level and origin as tags (`category:code-defect`, `context:diff`, `origin:human`), a corpus's
cases theirs (`language:go`, `tier:subtle`), and one overall figure hides which of them a review
is good at.

A tag of a case takes in the whole case: its items, its findings, its must-not places. A tag of
an item takes in the items (and must-not places) that carry it and the findings of the cases that
hold one: its recall is those items matched over those items; its precision is the findings that
match one of those items over all the findings of those cases (a finding about another item of the
case counts against it, so the precisions of the values of one kind add up to at most the overall
precision of the cases they cover).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

from bot.eval.corpus import Case
from bot.eval.score import CaseScore, ratio


@dataclass(frozen=True, slots=True)
class Slice:
    cases: int = 0
    items: int = 0
    found: int = 0
    findings: int = 0
    matched: int = 0
    places: int = 0
    quiet: int = 0

    def __add__(self, other: Slice) -> Slice:
        return Slice(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(Slice)))

    def to_json(self) -> dict:
        return {"cases": self.cases, "items": self.items, "found": self.found,
                "recall": ratio(self.found, self.items), "findings": self.findings, "matched": self.matched,
                "precision": ratio(self.matched, self.findings), "places": self.places, "quietPlaces": self.quiet,
                "quiet": ratio(self.quiet, self.places)}


def case_tags(case: Case) -> list[str]:
    """Every tag of the case, of its items and of its must-not places, each once."""
    found = [*case.tags, *(t for item in (*case.must_find, *case.must_not) for t in item.tags)]
    return list(dict.fromkeys(found))


def slice_of(case: Case, score: CaseScore, tag: str) -> Slice:
    """What one case adds to the slice of `tag` (nothing when neither it nor a place of it carries it)."""
    whole = tag in case.tags
    items = [i for i, item in enumerate(case.must_find) if whole or tag in item.tags]
    places = [i for i, place in enumerate(case.must_not) if whole or tag in place.tags]
    if not whole and not items and not places:
        return Slice()
    wanted = set(items)
    return Slice(
        cases=1, items=len(items), found=sum(1 for i in items if score.items[i]),
        findings=len(score.matched_findings),
        matched=sum(1 for matched in score.matched_findings if wanted.intersection(matched)),
        places=len(places), quiet=sum(1 for i in places if not score.quiet[i]),
    )


def by_tag(scored: Iterable[tuple[Case, CaseScore]]) -> dict[str, Slice]:
    """tag → its slice over the counted cases, tags in sorted order."""
    out: dict[str, Slice] = {}
    for case, score in scored:
        for tag in case_tags(case):
            out[tag] = out.get(tag, Slice()) + slice_of(case, score, tag)
    return dict(sorted(out.items()))
