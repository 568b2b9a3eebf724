"""The head's ledger (bot/reviews/ledger.py) and what the pull request reads of it
(bot/reviews/voice.py): every source's findings counted once, one noise budget, only the diff
deciding, as plain functions."""

from __future__ import annotations

import pytest

from bot.reviews.diff import read_patches
from bot.reviews.findings import Finding
from bot.reviews.fingerprints import PostedFinding
from bot.reviews.ledger import (
    DEFAULT_MAX_INLINE,
    Entry,
    NoiseBudget,
    build,
    carried_entry,
    model_entry,
    verdict,
)
from bot.reviews.shaping import Placed
from bot.reviews.voice import review_body

B, IMP, M, N = "blocking", "important", "minor", "nit"
HEAD = "c0ffee" + "0" * 34
PATCHES = read_patches([{"filename": "src/a.py", "status": "modified",
                         "patch": "@@ -1,2 +1,4 @@\n import os\n+x = 1\n+y = 2\n z = 3\n@@ -20,1 +22,2 @@\n w\n+v"}])


def _entry(severity: str = M, line: int = 2, *, source: str = "model", print_: str | None = None,
           in_diff: bool = True, inline: bool = True, rule: str | None = None, path: str = "src/a.py",
           **flags: bool) -> Entry:
    finding = Finding(path, line, line, severity, "bug", f"{severity} at {line}")
    return Entry(finding, source, print_ or f"{source}:{severity}:{line}:{rule}", in_diff, inline=inline, rule=rule,
                 **flags)


def test_each_finding_counts_once_whatever_its_source():
    model = _entry(B, print_="same")
    ruff = _entry(M, 3, source="analyzer:ruff", rule="F401")
    ledger = build(HEAD, [model, _entry(B, print_="same", source="analyzer:semgrep"), ruff,
                          _entry(M, 3, source="analyzer:Ruff-CI", rule="F401"),  # the same rule at the same line
                          _entry(M, 3, source="analyzer:ruff", rule="E501")])  # another rule there: its own
    assert [e.source for e in ledger.entries] == ["model", "analyzer:ruff", "analyzer:ruff"]
    assert ledger.duplicates == 2 and ledger.sources == {"model": 1, "ruff": 2}
    assert ledger.notes[-1].startswith("2 finding(s) two sources both made")
    standing = ledger.standing()
    assert (standing.total, standing.all.blocking, standing.all.minor) == (3, 1, 2)
    assert standing.line() == "3 findings stand at this head: 1 blocking, 0 important, 2 minor, 0 nit (model 1, ruff 2)."


def test_only_the_diff_decides():
    outside = _entry(B, 90, in_diff=False, inline=False)
    ledger = build(HEAD, [_entry(M), outside])
    assert ledger.deciding == (ledger.entries[0],) and ledger.outside == (outside,)
    assert verdict(ledger) == ("success", "Nothing blocking or important; 1 outside the diff")
    assert "1 outside the diff, which decides nothing" in ledger.standing().line()
    assert verdict(build(HEAD, [outside, _entry(IMP)])) == ("success", "1 important finding(s), nothing blocking; "
                                                                        "1 outside the diff")
    assert verdict(build(HEAD, [_entry(B, withheld=True)])) == (
        "failure", "1 blocking finding(s) (1 withheld: no suggested fix)")
    assert verdict(build(HEAD, [])) == ("success", "No findings")


def test_a_review_a_budget_held_is_neutral_unless_something_blocking_fails_it():
    assert verdict(build(HEAD, [_entry(IMP)]), held_by_budget=True)[0] == "neutral"
    assert verdict(build(HEAD, []), held_by_budget=True)[0] == "neutral"
    assert verdict(build(HEAD, [_entry(B)]), held_by_budget=True)[0] == "failure"
    assert verdict(build(HEAD, [_entry(B, in_diff=False)]), held_by_budget=True)[0] == "neutral"


@pytest.mark.parametrize("name, wanted, budget, inline, below, over", [
    ("no caps", [(N, True), (M, True)], NoiseBudget(None), (True, True), 0, 0),
    ("the floor moves lower severities", [(B, True), (M, True), (N, True), (IMP, True)], NoiseBudget(floor=IMP),
     (True, False, False, True), 2, 0),
    ("already in the summary stays there, uncounted", [(N, False), (B, False)], NoiseBudget(floor=M),
     (False, False), 0, 0),
    ("the cap moves the lowest first", [(M, True), (B, True), (N, True), (IMP, True)], NoiseBudget(2),
     (False, True, False, True), 0, 2),
    ("of one severity, the later ones first", [(M, True), (M, True), (M, True)], NoiseBudget(1),
     (True, False, False), 0, 2),
    ("floor first, then the cap over what is left", [(N, True), (IMP, True), (IMP, True), (B, True), (M, True)],
     NoiseBudget(2, M), (False, True, False, True, False), 1, 2),
    ("a cap of zero puts everything in the summary", [(B, True)], NoiseBudget(0), (False,), 0, 1),
    ("within the cap nothing moves", [(N, True), (B, False)], NoiseBudget(1), (True, False), 0, 0),
    ("a severity we do not know is the lowest", [("weird", True), (N, True)], NoiseBudget(1), (False, True), 0, 1),
    ("and below any floor but the lowest", [("weird", True), (N, True)], NoiseBudget(floor=M), (False, False), 2, 0),
])
def test_one_noise_budget(name, wanted, budget, inline, below, over):
    entries = [_entry(severity, line, inline=flag) for line, (severity, flag) in enumerate(wanted, 1)]
    ledger = build(HEAD, entries, budget)
    assert (tuple(e.inline for e in ledger.entries), ledger.below_floor, ledger.over_cap) == (inline, below, over), name


def test_the_budget_counts_every_source_and_says_what_it_moved():
    model = [_entry(IMP, line) for line in (1, 2)]
    ruff = [_entry(M, line, source="analyzer:ruff", rule=f"R{line}") for line in (3, 4, 5)]
    ledger = build(HEAD, [*model, *ruff, _entry(N, 6, source="analyzer:ruff", rule="N1")], NoiseBudget(3, M))
    assert [e.finding.start_line for e in ledger.inline] == [1, 2, 3]
    assert ledger.notes == (
        "1 finding below the inline floor (minor) is listed in this summary only",
        "2 findings past the limit of 3 inline comments a review are listed in this summary only (the lowest "
        "severities first)")
    assert NoiseBudget().max_inline == DEFAULT_MAX_INLINE == 10


def test_a_finding_posted_before_stands_and_is_not_posted_again():
    before = _entry(B, posted_before=True, inline=False)
    ledger = build(HEAD, [before, _entry(M, 3)])
    assert ledger.posting == (ledger.entries[1],) and [r.fingerprint for r in ledger.records()] == ["model:minor:3:None"]
    assert ledger.records()[0].head_sha == HEAD and ledger.records()[0].start_line == 3
    assert verdict(ledger)[0] == "failure"  # it still decides


def test_a_carried_finding_is_on_the_diff_while_its_code_is():
    kept = PostedFinding("p1", "src/a.py", "blocking", "bug", "x = 1", "Bad.", "h0", "model", None, 2, 2)
    outside = PostedFinding("p2", "src/b.py", "important", "bug", "", "Far.", "h0")
    entries = [carried_entry(kept), carried_entry(outside)]
    assert [(e.in_diff, e.posted_before, e.carried, e.finding.start_line) for e in entries] == [
        (True, True, True, 2), (False, True, True, 1)]


def test_a_model_finding_is_in_the_diff_when_a_line_of_it_is():
    placed = Placed(Finding("src/a.py", 3, 30, "minor", "bug", "Spans the hunks."), (), False)
    far = Placed(Finding("src/a.py", 40, 41, "minor", "bug", "Far."), (), False)
    assert model_entry(placed, PATCHES).in_diff and not model_entry(far, PATCHES).in_diff
    assert model_entry(placed, PATCHES).code == "y = 2\nz = 3\nw\nv"


def test_the_reviews_body_reads_the_ledger():
    ledger = build(HEAD, [_entry(B), _entry(M, 3, source="analyzer:ruff", rule="F401", inline=False),
                          _entry(IMP, 4, posted_before=True, inline=False)])
    assert review_body(ledger, "<!-- m -->") == (
        "<!-- m -->\n**Reviewer** at `c0ffee0`: this review posts 2 findings, 1 of them inline. 3 findings stand at "
        "this head: 1 blocking, 1 important, 1 minor, 0 nit (model 2, ruff 1). The summary comment has the overview.")


def test_the_ledger_as_json_names_each_findings_source():
    ledger = build(HEAD, [_entry(B), _entry(M, 3, source="analyzer:ruff", rule="F401")])
    data = ledger.to_json()
    assert [(f["source"], f.get("rule")) for f in data["findings"]] == [("model", None), ("analyzer:ruff", "F401")]
    assert ledger.entries[1].to_json() == {"path": "src/a.py", "startLine": 3, "endLine": 3, "severity": "minor",
                                           "category": "bug", "message": "minor at 3", "source": "analyzer:ruff",
                                           "rule": "F401"}  # what `reviewer review --format json` prints
    assert data["findings"][0]["inDiff"] is True and data["findings"][0]["postedBefore"] is False
    assert data["standing"]["total"] == 2 and data["standing"]["sources"] == ["model 1", "ruff 1"]
