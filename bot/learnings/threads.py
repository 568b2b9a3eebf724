"""Which of the app's own review threads it closes (pure; docs/reviews.md "What became of each
finding").

A posted finding is resolved when a push changed its lines (bot/learnings/outcomes.py). If the
review of the new head does not find it again — no finding standing there on the same file says
what it said, or, for an analyzer's, is of the same rule — its thread is closed by the app
(`resolveReviewThread`, bot/pipeline/threads.py), unless a person replied in it: a discussion is
for people to close. The tally counts the threads the app closed.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.learnings.followed import Followed
from bot.reviews.fingerprints import normalise_message
from bot.reviews.ledger import Ledger


def to_close(followed: Iterable[Followed], ledger: Ledger) -> tuple[int, ...]:
    """The inline comments (the threads' first) of the resolved findings not found again at the
    ledger's head, whose threads are still open."""
    out = []
    for f in followed:
        if f.comment_id is None or f.state != "resolved" or f.tracked.changed is None:
            continue
        if f.tracked.thread_resolved is not None or found_again(f, ledger):
            continue
        out.append(f.comment_id)
    return tuple(out)


def found_again(followed: Followed, ledger: Ledger) -> bool:
    """Whether a finding standing at the ledger's head is the followed one made again: on the same
    file, saying the same (its message, normalised), or of the same rule."""
    said = normalise_message(followed.message)
    rules = set(followed.tracked.rules)
    for entry in ledger.entries:
        if entry.finding.path != followed.tracked.path:
            continue
        if normalise_message(entry.finding.message) == said or (entry.rule is not None and entry.rule in rules):
            return True
    return False


def closed_by(followed: Followed, login: str) -> bool:
    """Whether the app (`login`, `<slug>[bot]`) closed the finding's thread itself."""
    mark = followed.tracked.thread_resolved
    return bool(login) and followed.state == "resolved" and mark is not None and mark.by == login
