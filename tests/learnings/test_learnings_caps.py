"""Noise caps on inline comments, and the walkthrough read from a model's answer."""

import pytest

from bot.learnings.caps import Caps, cap_inline
from bot.reviews.walkthrough import FileLine, Walkthrough, read_walkthrough, render

B, IMP, M, N = "blocking", "important", "minor", "nit"


@pytest.mark.parametrize("name, placed, caps, inline, below, over", [
    ("no caps", [(N, True), (M, True)], Caps(), (True, True), 0, 0),
    ("the floor moves lower severities", [(B, True), (M, True), (N, True), (IMP, True)], Caps(floor=IMP),
     (True, False, False, True), 2, 0),
    ("already in the summary stays there, uncounted", [(N, False), (B, False)], Caps(floor=M), (False, False), 0, 0),
    ("the cap moves the lowest first", [(M, True), (B, True), (N, True), (IMP, True)], Caps(max_inline=2),
     (False, True, False, True), 0, 2),
    ("of one severity, the later ones first", [(M, True), (M, True), (M, True)], Caps(max_inline=1),
     (True, False, False), 0, 2),
    ("floor first, then the cap over what is left", [(N, True), (IMP, True), (IMP, True), (B, True), (M, True)],
     Caps(max_inline=2, floor=M), (False, True, False, True, False), 1, 2),
    ("a cap of zero puts everything in the summary", [(B, True)], Caps(max_inline=0), (False,), 0, 1),
    ("within the cap nothing moves", [(N, True), (B, False)], Caps(max_inline=1), (True, False), 0, 0),
    ("a severity we do not know is the lowest", [("weird", True), (N, True)], Caps(max_inline=1), (False, True), 0, 1),
    ("and below any floor but the lowest", [("weird", True), (N, True)], Caps(floor=M), (False, False), 2, 0),
])
def test_caps(name, placed, caps, inline, below, over):
    capped = cap_inline(placed, caps)
    assert (capped.inline, capped.below_floor, capped.over_cap) == (inline, below, over), name


def test_the_summary_says_what_the_caps_moved():
    capped = cap_inline([(N, True), (M, True), (M, True), (IMP, True)], Caps(max_inline=1, floor=M))
    assert capped.notes() == [
        "1 finding below the inline floor (minor) is listed in this summary only",
        "2 findings past the limit of 1 inline comments a review are listed in this summary only (the lowest "
        "severities first)"]
    assert cap_inline([(N, True)], Caps()).notes() == []


FILES = ["src/a.py", "src/b.py", "docs/x.md"]


def test_a_walkthrough_in_the_plans_order_one_line_each():
    walk = read_walkthrough([{"path": "docs/x.md", "summary": "Documents the new flag."},
                             {"path": "./src/a.py", "summary": "Adds the\n`--fast` flag\tand its parser."}], FILES)
    assert walk == Walkthrough((FileLine("src/a.py", "Adds the `--fast` flag and its parser."),
                                FileLine("docs/x.md", "Documents the new flag.")), ())
    assert render(walk) == ("**What changed**\n\n- `src/a.py` — Adds the `--fast` flag and its parser.\n"
                            "- `docs/x.md` — Documents the new flag.")
    assert read_walkthrough(None, FILES) == Walkthrough() and render(Walkthrough()) == ""


def test_a_hostile_walkthrough_is_bounded_and_never_costs_anything_else():
    walk = read_walkthrough([
        {"path": "src/a.py", "summary": "ping @octo/owners \u202e" + "x" * 500},
        {"path": "src/a.py", "summary": "second about a"},
        {"path": "/etc/passwd", "summary": "not ours"},
        {"path": "src/b.py", "summary": "  \n "},
        "text",
        {"path": "docs/x.md", "summary": "fine", "extra": 1},
    ], FILES)
    [first, last] = walk.lines
    assert first.path == "src/a.py" and len(first.summary) == 200 and "\u202e" not in first.summary
    assert "`@octo`" in render(walk) and "ping @octo" not in render(walk)
    assert last == FileLine("docs/x.md", "fine")
    assert walk.remarks == ("walkthrough[1]: src/a.py is described twice; the first is kept; left out",
                            "walkthrough[2]: path: not a file of this review; left out",
                            "walkthrough[3]: summary: a non-empty string is required; left out")
    assert read_walkthrough({"path": "src/a.py"}, FILES).remarks == ("walkthrough: not a list; left out",)


def test_a_path_with_backticks_stays_one_code_span():
    walk = read_walkthrough([{"path": "odd`name.py", "summary": "s"}], ["odd`name.py"])
    assert render(walk).endswith("- `` odd`name.py `` — s")
