"""The walkthrough read from a model's answer (bot/reviews/walkthrough.py)."""

from bot.reviews.walkthrough import FileLine, Walkthrough, read_walkthrough, render

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
