"""A job's journal (bot.pipeline.journal): the decision it records comes back whole, and the marker
that names a delivery in a post can never end its hidden comment early."""

from __future__ import annotations

import json

from bot.pipeline.journal import ANSWER, Planned, Remembered, from_record, marker, to_record
from bot.reviews.checkrun import CheckRunReport
from bot.reviews.findings import Finding
from bot.reviews.ledger import Entry, build
from bot.reviews.output import Annotation, ApprovalAction, Attempt, InlineComment, LeftOut, ModelCost, ReviewOutput
from bot.reviews.shaping import Counts, RuleRef
from bot.reviews.verdict import Refuted, Verification

LEDGER = build("a" * 40, [
    Entry(Finding("src/calc.py", 5, 6, "blocking", "bug", "Division by zero.", "return 0", ("no-div",)), "model",
          "f1", True, inline=True, rules=(RuleRef("no-div", "Never divide by zero"),), code="return a / b"),
    Entry(Finding("src/calc.py", 1, 1, "minor", "style", "Unused import (ruff F401)", None, ("F401",)),
          "analyzer:ruff", "f2", True, posted_before=True, rule="F401", comment="**minor** · style · `ruff`"),
])

OUTCOME = ReviewOutput(
    status="completed", head_sha="a" * 40, model="local/m1", fallback_used=True, failure=None,
    attempts=(Attempt("local/m0", "timed out"), Attempt("local/m1", None)),
    inline=(InlineComment("src/calc.py", 6, "Division by zero.", start_line=5),),
    summary="<!-- reviewer:summary -->\n## Reviewer\n1 finding", counts=Counts(malformed=1, over_limit=2),
    annotations=(Annotation("src/calc.py", 5, 6, "failure", "Division by zero.", "bug"),),
    decisions=(ApprovalAction("dismiss", "no blocking finding left", review_id=7), ApprovalAction("approve", "ok", commit_id="b" * 40)),
    conclusion="failure", title="1 blocking finding(s)", notes=("one file was too big",), kind="incremental",
    ledger=LEDGER, review_body="**Reviewer** at `aaaaaaa`", cost=ModelCost(2, 100, 20, 0, None, ("local/m1",)),
    left_out=(LeftOut("big.bin", "no textual diff"),), resolve=(11, 12),
    verification=Verification("local/m1", confirmed=1, refuted=(Refuted(
        Finding("src/calc.py", 9, 9, "important", "security", "Returns a secret.", None, ("no-env",)),
        "It is the documented reader."),), failed=1, failed_reason="HTTP 500"))
REPORT = CheckRunReport("success", "Reviewing 1 file", "## The plan", "text",
                        [{"path": "a.py", "start_line": 1, "end_line": 1, "annotation_level": "notice",
                          "title": "t", "message": "m"}])


def test_a_decision_comes_back_as_it_was_recorded_through_json():
    planned = Planned(REPORT, OUTCOME, ("Incremental review: ...",), Remembered("digest", "c" * 40),
                      uploads=("u1",))
    assert from_record(json.loads(json.dumps(to_record(planned)))) == planned
    assert [p.fingerprint for p in OUTCOME.fingerprints] == ["f1"]  # what it posts: the new finding alone
    failed = Planned(CheckRunReport("failure", "Reviewer could not finish: planning", "why"), error="GitHub 502")
    assert from_record(json.loads(json.dumps(to_record(failed)))) == failed


def test_an_answers_journal_is_no_reviews_decision():
    assert from_record({"kind": ANSWER, "text": "An answer."}) is None


def test_a_journal_of_the_release_before_the_ledger_is_decided_again():
    """Its shape is gone; what it posted carries the delivery's markers, so nothing is posted twice."""
    old = {**to_record(Planned(REPORT)), "outcome": {"status": "completed"}}
    del old["output"]
    assert from_record(old) is None
    failed = {**to_record(Planned(REPORT, error="GitHub 502")), "outcome": None}
    del failed["output"]
    assert from_record(failed) == Planned(REPORT, error="GitHub 502")  # a failure it recorded still stands


def test_the_marker_keeps_only_what_a_delivery_id_is_made_of():
    assert marker("72d3162e-cc78-11e3-81ab-4c9367dc0958", "review") == (
        "<!-- reviewer:review delivery=72d3162e-cc78-11e3-81ab-4c9367dc0958 -->")
    hostile = marker("x --> <img src=y> <!--", "answer")
    assert hostile.count("-->") == 1 and hostile.endswith(" -->") and "<img" not in hostile
