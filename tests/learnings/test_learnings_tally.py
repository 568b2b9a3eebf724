"""Outcomes added up: a pull request's tally, resolution rates over time, most dismissed rules."""

from datetime import UTC, date, datetime, timedelta

import pytest

from bot.learnings.outcomes import Reacted, Tracked, follow
from bot.learnings.tally import (
    Dismissals,
    RatePoint,
    Record,
    Tally,
    count_states,
    most_dismissed,
    rates,
    record_of,
    select,
    tally,
)

MON = datetime(2025, 4, 28, 9, 0, tzinfo=UTC)  # a Monday


@pytest.mark.parametrize("states, line", [
    (["resolved", "dismissed", "open"], "3 findings: 1 resolved, 1 dismissed, 1 open"),
    (["open"], "1 finding: 0 resolved, 0 dismissed, 1 open"),
    (["resolved", "resolved"], "2 findings: 2 resolved, 0 dismissed, 0 open"),
    ([], "no findings"),
])
def test_the_pull_requests_tally(states, line):
    assert tally(states).line() == line


def rec(state, days=0, account="octo", repository="app", rules=(), category="style"):
    return Record(account, repository, MON + timedelta(days=days), state, rules, category)


RECORDS = [rec("resolved"), rec("open", 1), rec("dismissed", 2), rec("resolved", 8), rec("resolved", 9),
           rec("dismissed", 22), rec("open", 0, "other", "x")]


def test_weekly_rates_fill_the_gaps_and_count_by_the_week_posted():
    points = rates(select(RECORDS, account="OCTO"), "week")
    assert points == [RatePoint(date(2025, 4, 28), 3, 1, 1, 1), RatePoint(date(2025, 5, 5), 2, 2, 0, 0),
                      RatePoint(date(2025, 5, 12), 0, 0, 0, 0), RatePoint(date(2025, 5, 19), 1, 0, 1, 0)]
    assert [p.rate for p in points] == [1 / 3, 1.0, None, 0.0]


def test_daily_rates_within_a_window_in_utc():
    late_sunday = Record("octo", "app", datetime(2025, 5, 4, 23, 30, tzinfo=UTC) + timedelta(hours=0), "open")
    in_tokyo = Record("octo", "app", datetime(2025, 5, 5, 8, 0, tzinfo=UTC).astimezone(), "resolved")
    points = rates([late_sunday, in_tokyo], "day", since=date(2025, 5, 3), until=date(2025, 5, 6))
    assert [(p.start.isoformat(), p.posted, p.resolved) for p in points] == [
        ("2025-05-03", 0, 0), ("2025-05-04", 1, 0), ("2025-05-05", 1, 1), ("2025-05-06", 0, 0)]
    assert [p.start for p in rates([late_sunday, in_tokyo], "week")] == [date(2025, 4, 28), date(2025, 5, 5)]
    assert rates([], "week") == []


def test_select_by_account_and_repository():
    assert len(select(RECORDS)) == 7 and len(select(RECORDS, account="octo")) == 6
    assert select(RECORDS, account="other", repository="X") == [RECORDS[-1]]
    assert select(RECORDS, account="octo", repository="api") == []


def test_the_most_dismissed_rules_and_categories():
    records = [rec("dismissed", rules=("no-print",)), rec("dismissed", rules=("no-print", "no-print")),
               rec("resolved", rules=("no-print",)), rec("dismissed", rules=("ruff/E501",), category="docs"),
               rec("open", rules=("ruff/E501",)), rec("resolved", rules=("never-dismissed",), category="bug")]
    assert most_dismissed(records) == [
        Dismissals("rule", "no-print", 2, 3), Dismissals("category", "style", 2, 4),  # a tie: the larger share
        Dismissals("category", "docs", 1, 1), Dismissals("rule", "ruff/E501", 1, 2)]
    assert most_dismissed(records, limit=1) == [Dismissals("rule", "no-print", 2, 3)]
    assert most_dismissed(records)[0].share == pytest.approx(2 / 3)


def test_counts_for_metrics_and_records_from_tracked_findings():
    assert count_states(RECORDS) == {"resolved": 3, "dismissed": 2, "open": 2}
    assert count_states([]) == {"resolved": 0, "dismissed": 0, "open": 0}
    tracked = follow(Tracked("fp", "a.py", 1, 2, "sha", MON, ("r",), "bug"), [Reacted("bob", MON + timedelta(1))])
    assert record_of(tracked, "octo", "app") == Record("octo", "app", MON, "dismissed", ("r",), "bug",
                                                       MON + timedelta(1))
    assert tally([record_of(tracked, "octo", "app").state]) == Tally(0, 1, 0)
