"""The learnings a review applies, as plain functions: findings of any shape left out by rule id
(an analyzer's too), the tally line (and the threads the app closed), the rate chart."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from bot.learnings.chart import Series, rate_chart
from bot.learnings.model import Learning, Scope
from bot.learnings.posting import retallied, with_tally
from bot.learnings.review import ForReview, leave_out_findings
from bot.learnings.tally import RatePoint, Tally
from bot.reviews.findings import Finding
from bot.reviews.output import InlineComment, ReviewOutput
from bot.reviews.shaping import Counts

NOW = datetime(2025, 5, 1, tzinfo=UTC)


@dataclass(frozen=True)
class AnalyzerFinding:
    """What an analyzer's finding looks like to suppression: a path, a message, a rule id."""

    path: str
    message: str
    rule_id: str
    category: str = "other"

    @property
    def rules(self) -> tuple[str, ...]:
        return (self.rule_id,)


def test_analyzer_findings_are_left_out_by_rule_id_with_the_note():
    learning = Learning("l1", Scope("octo", "app", ("src/**",)), "suppress", 'Ignore "subprocess call" here', NOW,
                        rule="B603")
    found = [AnalyzerFinding("src/run.py", "subprocess call - check for execution of untrusted input.", "B603"),
             AnalyzerFinding("tests/run.py", "subprocess call - check for execution of untrusted input.", "B603"),
             AnalyzerFinding("src/run.py", "subprocess call without shell", "B604")]
    kept, note = leave_out_findings(found, [learning], account="OCTO", repository="app")
    assert kept == found[1:] and note == "1 finding left out by learnings (see /console/learnings)"
    kept, note = leave_out_findings(found, [learning], account="octo", repository="web")
    assert kept == found and note is None


def test_placed_items_are_kept_in_order_and_matched_by_fingerprint():
    learning = Learning("l2", Scope("octo"), "suppress", "anything at all", NOW, category="bug", fingerprint="fp-1")
    items = [("a", Finding("x.py", 1, 1, "minor", "bug", "One.")), ("b", Finding("y.py", 2, 2, "minor", "bug", "Two."))]
    kept, left = ForReview("octo", "app", (learning,)).leave_out(items, lambda item: item[1],
                                                                  lambda item: "fp-1" if item[0] == "b" else None)
    assert kept == [items[0]] and [learning_ for _, learning_ in left.left_out] == [learning]


def _outcome(*findings: Finding) -> ReviewOutput:
    inline = tuple(InlineComment(f.path, f.end_line, f"body of {f.message}",
                                 start_line=f.start_line if f.start_line != f.end_line else None) for f in findings)
    return ReviewOutput("completed", "h" * 40, "m", False, None, (), inline, "<!-- reviewer:summary -->\nSummary",
                         Counts(), (), (), "failure", "title")


def test_the_tally_ends_the_summary_only_when_something_was_posted():
    outcome = _outcome()
    assert with_tally(outcome, Tally()) == outcome
    assert with_tally(outcome, Tally(1, 0, 2)).summary.endswith(
        "**Findings of this pull request so far:** 3 findings: 1 resolved, 0 dismissed, 2 open")
    assert with_tally(outcome, Tally(2, 0, 1, closed=1)).summary.endswith(
        "3 findings: 2 resolved (1 thread closed by the app), 0 dismissed, 1 open")
    assert Tally(2, 0, 0, closed=2).line() == "2 findings: 2 resolved (2 threads closed by the app), 0 dismissed, 0 open"


def test_the_chart_escapes_names_and_breaks_at_empty_weeks():
    weeks = (RatePoint(date(2025, 4, 7), 2, 1, 1, 0), RatePoint(date(2025, 4, 14), 0, 0, 0, 0),
             RatePoint(date(2025, 4, 21), 4, 4, 0, 0))
    svg = rate_chart([Series("<script>alert(1)</script>/app", weeks)], "Resolution rate")
    assert svg.startswith("<svg") and "<script>" not in svg and "&lt;script&gt;" in svg
    assert svg.count("<polyline") == 2  # the empty week breaks the line
    assert "1 of 2 resolved" in svg and "4 of 4 resolved" in svg
    assert rate_chart([], "nothing") == ""


def test_the_tally_line_is_replaced_in_place():
    summary = "<!-- reviewer:summary -->\n## Reviewer\n\n**Findings of this pull request so far:** 2 findings: 0 resolved, 0 dismissed, 2 open"
    assert retallied(summary, Tally(0, 1, 1)) == summary.replace("0 dismissed, 2 open", "1 dismissed, 1 open")
    assert retallied("<!-- reviewer:summary -->\n## Reviewer", Tally(1, 0, 0)) is None
