"""What became of a posted finding: its lines followed across pushes, and the outcome's rules."""

import difflib
import random
from datetime import UTC, datetime, timedelta

import pytest

from bot.learnings.outcomes import (
    LearnedFrom,
    Pushed,
    Reacted,
    Rewritten,
    ThreadResolved,
    Tracked,
    follow,
    map_line,
    outcome,
    touches,
)
from bot.reviews.diff import read_patches

T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
OLD = [f"line {n}" for n in range(1, 31)]


def patch_text(old, new, context=3):
    """A unified diff's hunks, as GitHub's `patch` field holds them."""
    lines = difflib.unified_diff(old, new, lineterm="", n=context)
    return "\n".join(line for line in lines if not line.startswith(("---", "+++")))


def edited(changes):
    """OLD with `changes` applied: {line number: replacement lines} ([] deletes, [x, line] inserts)."""
    out = []
    for number, text in enumerate(OLD, 1):
        out.extend(changes.get(number, [text]))
    return out


def pushed(new, path="src/a.py", status="modified", renamed=None, context=3, at=T0 + timedelta(hours=1)):
    entry = {"filename": path, "status": status, "patch": patch_text(OLD, new, context)}
    return Pushed("bbbbbbbbbb", read_patches([entry]), at, renamed or {})


FINDING = Tracked("fp", "src/a.py", 10, 12, "aaaaaaa", T0, ("no-print",), "style")


@pytest.mark.parametrize("name, changes, state, lines", [
    ("its middle line edited", {11: ["line 11 fixed"]}, "resolved", None),
    ("its first line edited", {10: ["x"]}, "resolved", None),
    ("its last line removed", {12: []}, "resolved", None),
    ("a line inserted inside it", {10: ["line 10", "inserted"]}, "resolved", None),
    ("the line above edited", {9: ["line 9 changed"]}, "open", (10, 12)),
    ("the line below edited", {13: ["line 13 changed"]}, "open", (10, 12)),
    ("two lines inserted above", {5: ["line 5", "a", "b"]}, "open", (12, 14)),
    ("a line inserted just above it", {9: ["line 9", "just above"]}, "open", (11, 13)),
    ("a line inserted just below it", {12: ["line 12", "just below"]}, "open", (10, 12)),
    ("three lines removed above", {1: [], 2: [], 3: []}, "open", (7, 9)),
    ("lines above and below changed", {2: ["a", "b"], 20: []}, "open", (11, 13)),
    ("inserted at the top of the file", {1: ["new first", "line 1"]}, "open", (11, 13)),
])
@pytest.mark.parametrize("context", [3, 0])  # GitHub's three lines of context, and none (`-0,0` hunks)
def test_a_push_changes_or_moves_the_findings_lines(name, changes, state, lines, context):
    after = follow(FINDING, [pushed(edited(changes), context=context)])
    assert outcome(after).state == state, name
    if lines is not None:
        assert (after.start_line, after.end_line, after.head_sha) == (*lines, "bbbbbbbbbb"), name
        new = edited(changes)
        assert new[after.start_line - 1:after.end_line] == OLD[9:12], name


def test_mapping_keeps_the_same_text_under_random_edits():
    rng = random.Random(24)
    for _ in range(300):
        changes = {}
        for number in rng.sample(range(1, 31), rng.randint(1, 6)):
            changes[number] = rng.choice([[], [f"edit {number}"], [OLD[number - 1], "added"], ["a", "b", "c"]])
        patch = read_patches([{"filename": "f", "patch": patch_text(OLD, edited(changes), rng.choice([0, 1, 3]))}])
        hunks = patch["f"].hunks
        start = rng.randint(1, 28)
        end = start + rng.randint(0, 2)
        # A line of the range replaced or removed, or lines inserted after one of them but the last.
        touched = any(n in changes and changes[n][:1] != [OLD[n - 1]] for n in range(start, end + 1)) or any(
            n in changes and changes[n][:1] == [OLD[n - 1]] and len(changes[n]) > 1 for n in range(start, end))
        assert touches(hunks, start, end) == touched, changes
        if not touched:
            new = edited(changes)
            first, last = map_line(hunks, start), map_line(hunks, end)
            assert new[first - 1:last] == OLD[start - 1:end], changes


def test_its_file_deleted_renamed_or_left_alone():
    gone = follow(FINDING, [Pushed("ccc", read_patches([{"filename": "src/a.py", "status": "removed",
                                                          "patch": patch_text(OLD, [])}]), T0)])
    assert (outcome(gone).state, outcome(gone).reason) == ("resolved", "ccc deleted its file")
    moved = follow(FINDING, [pushed(edited({1: []}), path="lib/a.py", status="renamed",
                                    renamed={"src/a.py": "lib/a.py"})])
    assert (moved.path, moved.start_line, moved.end_line, outcome(moved).state) == ("lib/a.py", 9, 11, "open")
    renamed_only = follow(FINDING, [Pushed("ddd", read_patches([{"filename": "lib/a.py", "status": "renamed"}]),
                                           T0, {"src/a.py": "lib/a.py"})])
    assert (renamed_only.path, renamed_only.start_line, outcome(renamed_only).state) == ("lib/a.py", 10, "open")
    elsewhere = follow(FINDING, [pushed(edited({11: ["x"]}), path="src/b.py")])
    assert (elsewhere.start_line, outcome(elsewhere).state) == (10, "open")
    binary = follow(FINDING, [Pushed("eee", read_patches([{"filename": "src/a.py", "status": "modified"}]), T0)])
    assert (binary.start_line, outcome(binary).state) == (10, "open")


def test_once_changed_later_pushes_do_not_move_it():
    fixed = follow(FINDING, [pushed(edited({11: ["fixed"]})), pushed(edited({1: []}))])
    assert (fixed.start_line, outcome(fixed).state, fixed.changed.by) == (10, "resolved", "bbbbbbbbbb")


def test_a_force_push_is_judged_by_its_code():
    kept = follow(FINDING, [Rewritten("fff", True, T0)])
    gone = follow(FINDING, [Rewritten("fff", False, T0)])
    assert (outcome(kept).state, kept.head_sha) == ("open", "fff")
    assert outcome(gone) == outcome(gone) and outcome(gone).state == "resolved"
    assert outcome(gone).reason == "its code is gone from the pull request at fff"


LATER = T0 + timedelta(days=1)


@pytest.mark.parametrize("name, events, state, reason", [
    ("nothing happened", [], "open", "nothing changed its lines yet"),
    ("a thumbs-down", [Reacted("bob", LATER)], "dismissed", "👎 by bob"),
    ("a learning", [LearnedFrom("0123abcd", LATER)], "dismissed", "learning 0123abcd was made from it"),
    ("resolved with no change", [ThreadResolved(True, "alice", LATER)], "dismissed",
     "alice resolved its thread with no change to its lines"),
    ("resolved, then unresolved", [ThreadResolved(True, "alice", LATER), ThreadResolved(False, "bob", LATER)],
     "open", "nothing changed its lines yet"),
    ("changed, then resolved", ["fix", ThreadResolved(True, "alice", LATER)], "resolved", "bbbbbbb changed its lines"),
    ("resolved, then changed", [ThreadResolved(True, "alice", LATER), "fix"], "resolved",
     "bbbbbbb changed its lines"),
    ("changed, then a thumbs-down: people said it does not apply", ["fix", Reacted("bob", LATER)], "dismissed",
     "👎 by bob"),
    ("the first of two dismissals counts", [Reacted("bob", LATER), LearnedFrom("x", LATER + timedelta(1))],
     "dismissed", "👎 by bob"),
])
def test_the_outcome_rules(name, events, state, reason):
    fix = pushed(edited({11: ["fixed"]}))
    after = follow(FINDING, [fix if event == "fix" else event for event in events])
    assert (outcome(after).state, outcome(after).reason) == (state, reason), name
    assert (outcome(after).at is None) == (state == "open")
