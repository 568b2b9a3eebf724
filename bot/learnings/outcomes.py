"""What became of a posted finding (pure): `resolved`, `dismissed` or `open` (docs/reviews.md
"Learnings").

A posted finding is followed as a `Tracked` record, advanced by what happens on its pull request:
- a push (`Pushed`: the diff from the head its lines are numbered at to the new head) either
  changes its lines — a line of its range removed or changed, a line inserted inside it, its file
  deleted — or moves them (lines added or removed above it shift it; a renamed file takes its new
  path); a push whose diff GitHub does not give (binary, too large) moves nothing;
- a force-push (`Rewritten`) cannot be mapped line by line: the finding's code either is still in
  the pull request's diff at the new head or is gone (a change);
- its review thread resolved or unresolved (`ThreadResolved`), a 👎 on it (`Reacted`), a learning
  made from it (`LearnedFrom`).

The outcome, in this order: a 👎 or a learning → `dismissed` (people said it does not apply,
whatever changed later); its lines changed → `resolved`; its thread resolved with no change to its
lines → `dismissed`; else `open`. Once its lines changed, pushes no longer move it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Literal

from bot.reviews.diff import FilePatch, Hunk

State = Literal["resolved", "dismissed", "open"]
STATES: tuple[State, ...] = ("resolved", "dismissed", "open")


@dataclass(frozen=True)
class Mark:
    """When something decisive happened, and who or what did it (a login, a learning id, a commit)."""

    at: datetime
    by: str
    how: Literal["push", "deleted", "rewritten", "reaction", "learning", "thread"]


@dataclass(frozen=True)
class Tracked:
    """A posted finding as outcomes follow it: where its lines are now, and what happened to it."""

    fingerprint: str
    path: str
    start_line: int
    end_line: int
    head_sha: str  # the head its lines are numbered at
    posted_at: datetime
    rules: tuple[str, ...] = ()
    category: str = "other"
    changed: Mark | None = None  # the push that changed its lines
    dismissed: Mark | None = None  # the first 👎 or learning
    thread_resolved: Mark | None = None  # set while its thread is resolved


@dataclass(frozen=True)
class Pushed:
    head_sha: str
    patches: Mapping[str, FilePatch]  # the diff from the tracked head to `head_sha`, by new path
    at: datetime
    renamed: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # old path → new path


@dataclass(frozen=True)
class Rewritten:
    head_sha: str
    code_present: bool  # the finding's code is still in the pull request's diff at `head_sha`
    at: datetime


@dataclass(frozen=True)
class ThreadResolved:
    resolved: bool  # False: unresolved again
    by: str
    at: datetime


@dataclass(frozen=True)
class Reacted:
    """A 👎 on the finding's comment."""

    by: str
    at: datetime


@dataclass(frozen=True)
class LearnedFrom:
    learning_id: str
    at: datetime


Event = Pushed | Rewritten | ThreadResolved | Reacted | LearnedFrom


@dataclass(frozen=True)
class Outcome:
    state: State
    reason: str
    at: datetime | None  # when it was decided; None while open


def follow(tracked: Tracked, events: Iterable[Event]) -> Tracked:
    """`tracked` after `events`, oldest first."""
    for event in events:
        tracked = advance(tracked, event)
    return tracked


def advance(tracked: Tracked, event: Event) -> Tracked:
    if isinstance(event, Reacted | LearnedFrom):
        if tracked.dismissed is not None:
            return tracked
        if isinstance(event, Reacted):
            return replace(tracked, dismissed=Mark(event.at, event.by, "reaction"))
        return replace(tracked, dismissed=Mark(event.at, event.learning_id, "learning"))
    if isinstance(event, ThreadResolved):
        return replace(tracked, thread_resolved=Mark(event.at, event.by, "thread") if event.resolved else None)
    if tracked.changed is not None:
        return tracked
    if isinstance(event, Rewritten):
        if event.code_present:
            return replace(tracked, head_sha=event.head_sha)
        return replace(tracked, changed=Mark(event.at, event.head_sha, "rewritten"))
    return _pushed(tracked, event)


def _pushed(tracked: Tracked, push: Pushed) -> Tracked:
    path = push.renamed.get(tracked.path, tracked.path)
    patch = push.patches.get(path)
    moved = replace(tracked, path=path, head_sha=push.head_sha)
    if patch is None or (not patch.has_patch and patch.status != "removed"):
        return moved
    if patch.status == "removed":
        return replace(moved, changed=Mark(push.at, push.head_sha, "deleted"))
    if touches(patch.hunks, tracked.start_line, tracked.end_line):
        return replace(moved, changed=Mark(push.at, push.head_sha, "push"))
    start, end = map_line(patch.hunks, tracked.start_line), map_line(patch.hunks, tracked.end_line)
    assert start is not None and end is not None  # untouched lines are never removed
    return replace(moved, start_line=start, end_line=end)


def _first_old(hunk: Hunk) -> int:
    """The first old line a hunk walks: `-10,0` inserts after line 10, so its walk starts at 11."""
    return hunk.old_start if hunk.old_count else hunk.old_start + 1


def touches(hunks: Iterable[Hunk], start: int, end: int) -> bool:
    """Whether a diff removes or changes an old line start..end, or inserts lines inside that range."""
    for hunk in hunks:
        old = _first_old(hunk)
        for line in hunk.lines:
            if line.kind == "-":
                if start <= old <= end:
                    return True
                old += 1
            elif line.kind == "+":
                if start < old <= end:  # inserted between old lines old-1 and old, both in the range
                    return True
            else:
                old += 1
    return False


def map_line(hunks: Iterable[Hunk], line: int) -> int | None:
    """Old line `line`'s number in the new file, or None when the diff removes it."""
    delta = 0
    for hunk in sorted(hunks, key=_first_old):
        first = _first_old(hunk)
        if line < first:
            break
        if line >= first + hunk.old_count:
            delta += hunk.new_count - hunk.old_count
            continue
        old, new = first, hunk.new_start
        for diff_line in hunk.lines:
            if diff_line.kind == "+":
                new += 1
                continue
            if old == line:
                return new if diff_line.kind == " " else None
            old += 1
            if diff_line.kind == " ":
                new += 1
        return None
    return line + delta


def outcome(tracked: Tracked) -> Outcome:
    """What became of the finding so far (the module's docstring gives the order)."""
    if tracked.dismissed is not None:
        mark = tracked.dismissed
        reason = f"👎 by {mark.by}" if mark.how == "reaction" else f"learning {mark.by} was made from it"
        return Outcome("dismissed", reason, mark.at)
    if tracked.changed is not None:
        mark = tracked.changed
        reason = {"push": f"{mark.by[:7]} changed its lines", "deleted": f"{mark.by[:7]} deleted its file",
                  "rewritten": f"its code is gone from the pull request at {mark.by[:7]}"}[mark.how]
        return Outcome("resolved", reason, mark.at)
    if tracked.thread_resolved is not None:
        mark = tracked.thread_resolved
        return Outcome("dismissed", f"{mark.by} resolved its thread with no change to its lines", mark.at)
    return Outcome("open", "nothing changed its lines yet", None)
