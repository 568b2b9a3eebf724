"""Which of its threads the app closes (bot/learnings/threads.py): those of findings a push resolved
and the new head does not have again."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.learnings.followed import Followed
from bot.learnings.outcomes import Mark, Tracked
from bot.learnings.threads import closed_by, found_again, to_close
from bot.reviews.findings import Finding
from bot.reviews.ledger import Entry, build

NOW = datetime(2025, 5, 1, tzinfo=UTC)
PUSHED = Mark(NOW, "b" * 40, "push")


def _followed(comment_id: int | None, message: str = "Division by zero.", *, changed: Mark | None = PUSHED,
              rules: tuple[str, ...] = (), thread: Mark | None = None, dismissed: Mark | None = None) -> Followed:
    tracked = Tracked(f"fp{comment_id}", "src/calc.py", 6, 6, "a" * 40, NOW, rules, "bug", changed, dismissed, thread)
    return Followed("o/r#1", "o", "r", tracked, message, "blocking", comment_id)


def _standing(*entries: tuple[str, str | None]):
    return build("c" * 40, [Entry(Finding("src/calc.py", 9, 9, "minor", "bug", message), "analyzer:ruff" if rule
                                  else "model", f"p{i}", True, rule=rule) for i, (message, rule) in enumerate(entries)])


def test_a_resolved_finding_not_found_again_has_its_thread_closed():
    followed = [_followed(1), _followed(2, "Returns a secret.", changed=None),  # open: its lines did not change
                _followed(None, "Listed in the summary only."),  # no thread
                _followed(3, "Already closed.", thread=Mark(NOW, "alice", "thread")),
                _followed(4, "Said again."), _followed(5, "`sys` imported but unused (ruff F401)", rules=("F401",)),
                _followed(6, "Thumbed down.", dismissed=Mark(NOW, "bob", "reaction"))]
    ledger = _standing(("said again", None), ("`sys` is unused, says CI (Ruff F401)", "F401"))
    assert to_close(followed, ledger) == (1,)


def test_found_again_on_the_same_file_only():
    ledger = _standing(("Division by zero", None))
    assert found_again(_followed(1), ledger)
    elsewhere = build("c" * 40, [Entry(Finding("src/other.py", 6, 6, "blocking", "bug", "Division by zero."),
                                       "model", "p", True)])
    assert not found_again(_followed(1), elsewhere)


def test_the_tally_counts_the_threads_the_app_closed():
    ours = _followed(1, thread=Mark(NOW, "reviewer[bot]", "thread"))
    theirs = _followed(2, thread=Mark(NOW, "alice", "thread"))
    assert closed_by(ours, "reviewer[bot]") and not closed_by(theirs, "reviewer[bot]")
    assert not closed_by(ours, "")
