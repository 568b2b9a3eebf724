"""Adding outcomes up (pure): a pull request's tally for its summary comment, and, over many pull
requests, what the console's chart and `/metrics` show.

- `tally`: "3 findings: 1 resolved (1 thread closed by the app), 1 dismissed, 1 open".
- `rates`: per day or ISO week (Monday to Sunday, UTC) in which findings were *posted*, how many
  were posted and what each became; the resolution rate is resolved ÷ posted, so a week's rate
  can still rise while its findings' pull requests go on. Every period between the first and the
  last is present (zero where nothing was posted), as a chart wants.
- `most_dismissed`: the rules and the categories whose findings were most often dismissed.
- `count_states`: findings by state, what `/metrics` counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

from bot.learnings.outcomes import STATES, State, Tracked, outcome


@dataclass(frozen=True)
class Tally:
    resolved: int = 0
    dismissed: int = 0
    open: int = 0
    closed: int = 0  # of the resolved, those whose threads the app closed itself

    @property
    def total(self) -> int:
        return self.resolved + self.dismissed + self.open

    def line(self) -> str:
        """The summary comment's line: "3 findings: 1 resolved, 1 dismissed, 1 open"."""
        if not self.total:
            return "no findings"
        noun = "finding" if self.total == 1 else "findings"
        closed = (f" ({self.closed} thread{'s' if self.closed != 1 else ''} closed by the app)"
                  if self.closed else "")
        return f"{self.total} {noun}: {self.resolved} resolved{closed}, {self.dismissed} dismissed, {self.open} open"


def tally(states: Iterable[State], closed: int = 0) -> Tally:
    counted = Counter(states)
    return Tally(counted["resolved"], counted["dismissed"], counted["open"], closed)


@dataclass(frozen=True)
class Record:
    """One posted finding and what became of it, as the console and /metrics read them."""

    account: str
    repository: str  # the name within the account
    posted_at: datetime
    state: State
    rules: tuple[str, ...] = ()
    category: str = "other"
    decided_at: datetime | None = None


def record_of(tracked: Tracked, account: str, repository: str) -> Record:
    found = outcome(tracked)
    return Record(account, repository, tracked.posted_at, found.state, tracked.rules, tracked.category, found.at)


def select(records: Iterable[Record], *, account: str | None = None, repository: str | None = None) -> list[Record]:
    """The records of an account, and of one of its repositories (logins and names case-insensitive)."""
    return [r for r in records
            if (account is None or r.account.lower() == account.lower())
            and (repository is None or r.repository.lower() == repository.lower())]


@dataclass(frozen=True)
class RatePoint:
    start: date  # the day, or the Monday of the week
    posted: int
    resolved: int
    dismissed: int
    open: int

    @property
    def rate(self) -> float | None:
        """Resolved ÷ posted; None when nothing was posted."""
        return self.resolved / self.posted if self.posted else None


Period = Literal["day", "week"]


def period_start(moment: datetime, period: Period) -> date:
    day = moment.astimezone(UTC).date()
    return day - timedelta(days=day.weekday()) if period == "week" else day


def rates(records: Iterable[Record], period: Period = "week", *, since: date | None = None,
          until: date | None = None) -> list[RatePoint]:
    """One point per period from `since` (else the first posted) to `until` (else the last)."""
    counted: dict[date, Counter[str]] = {}
    for record in records:
        start = period_start(record.posted_at, period)
        counted.setdefault(start, Counter())[record.state] += 1
    first = period_start(datetime.combine(since, datetime.min.time(), UTC), period) if since else min(counted, default=None)
    last = period_start(datetime.combine(until, datetime.min.time(), UTC), period) if until else max(counted, default=None)
    if first is None or last is None:
        return []
    step = timedelta(days=7 if period == "week" else 1)
    points = []
    day = first
    while day <= last:
        c = counted.get(day, Counter())
        points.append(RatePoint(day, sum(c.values()), c["resolved"], c["dismissed"], c["open"]))
        day += step
    return points


Subject = Literal["rule", "category"]


@dataclass(frozen=True)
class Dismissals:
    kind: Subject
    name: str
    dismissed: int
    posted: int

    @property
    def share(self) -> float:
        return self.dismissed / self.posted


def most_dismissed(records: Iterable[Record], limit: int = 10) -> list[Dismissals]:
    """Rules and categories by how many of their findings were dismissed (most first; then by the
    share dismissed, then by name); those with none dismissed are left out."""
    posted: Counter[tuple[Subject, str]] = Counter()
    dismissed: Counter[tuple[Subject, str]] = Counter()
    for record in records:
        keys: list[tuple[Subject, str]] = [("rule", rule) for rule in dict.fromkeys(record.rules)] + [("category", record.category)]
        posted.update(keys)
        if record.state == "dismissed":
            dismissed.update(keys)
    rows = [Dismissals(kind, name, count, posted[(kind, name)])
            for (kind, name), count in dismissed.items()]
    rows.sort(key=lambda row: (-row.dismissed, -row.share, row.kind, row.name))
    return rows[:limit]


def count_states(records: Iterable[Record]) -> dict[State, int]:
    counted = Counter(record.state for record in records)
    return {state: counted[state] for state in STATES}
