"""Learning commands in comments, and the learnings they (or a 👎) make, refuse and answer."""

from datetime import UTC, datetime

import pytest

from bot.expr.globs import glob_match
from bot.learnings.capture import (
    FindingRef,
    Heard,
    Learned,
    Refused,
    Said,
    answer,
    decide,
    directory_glob,
    duplicate_of,
    escape_glob,
    from_reaction,
    read_learning,
)
from bot.learnings.model import Learning, Scope, Source
from bot.reviews.followup import read_comment

NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
FINDING = FindingRef("src/cli/main.py", "Use logging instead of print().", ("no-print",), "style", "ab" * 16)
URL = "https://github.com/octo/app/pull/7#discussion_r42"


def said(finding=FINDING, may_write=True, author="alice"):
    return Said("octo", "app", author, may_write, "reviewer", URL, finding)


@pytest.mark.parametrize("body, heard", [
    ("@reviewer ignore", Heard("ignore")),
    ("@Reviewer IGNORE.", Heard("ignore")),
    ("@reviewer[bot]   not-an-issue", Heard("not-an-issue")),
    ("@reviewer not an issue: the input is checked upstream", Heard("not-an-issue", "the input is checked upstream")),
    ("Thanks! @reviewer ignore, this is intended", Heard("ignore", "this is intended")),
    ("@reviewer learn We use tabs in Makefiles.", Heard("learn", "We use tabs in Makefiles.")),
    ("@reviewer LEARN: two lines\nof what to remember", Heard("learn", "two lines\nof what to remember")),
    ("@reviewer learn", Heard("learn", "")),
    ("> @reviewer ignore\nI disagree with the bot above", None),  # a quoted reply is not a command
    ("```\n@reviewer ignore\n```", None),  # nor is code
    ("~~~md\n@reviewer learn x\n~~~\nsee above", None),
    ("`@reviewer ignore` is how you dismiss it", None),  # inline code is no mention
    ("@reviewers ignore", None),  # another name
    ("@reviewer please ignore this", None),  # the command is the first word after the mention
    ("@reviewer learned a lot", None),
    ("@reviewer\nignore", None),  # the command is on the mention's line, as for every command
    ("@reviewer review", None),
    ("ignore", None),
    ("", None),
])
def test_learning_commands_are_read_as_every_command_is(body, heard):
    assert read_learning(body, "reviewer") == heard


def test_other_commands_read_as_before():
    assert read_comment("@reviewer full review", "reviewer").command == "full review"
    assert read_comment("> @reviewer review", "reviewer").kind == "nothing"
    assert read_comment("@reviewer why is this a bug at all here?", "reviewer").kind == "question"


def test_ignore_on_a_finding_suppresses_its_rule_in_its_directory():
    decision = decide(Heard("ignore", "print() is the CLI's output"), said(), id="id1", now=NOW)
    assert decision == Learned(Learning(
        "id1", Scope("octo", "app", ("src/cli/**",)), "suppress",
        "Use logging instead of print().\n\nWhy: print() is the CLI's output", NOW, rule="no-print",
        fingerprint=FINDING.fingerprint, source=Source(URL, "alice")))


def test_a_finding_without_a_rule_is_suppressed_by_its_category_and_a_root_file_by_the_whole_tree():
    finding = FindingRef("setup.py", "Pinned versions drift.", (), "risk", None)
    learning = decide(Heard("not-an-issue"), said(finding), id="id2", now=NOW).learning
    assert (learning.rule, learning.category, learning.scope.paths, learning.text, learning.fingerprint) == (
        None, "risk", ("**",), "Pinned versions drift.", None)


def test_learn_is_a_guide_for_the_repository_or_for_the_findings_file():
    anywhere = decide(Heard("learn", "We validate at the API edge."), said(None), id="g1", now=NOW).learning
    assert (anywhere.kind, anywhere.scope, anywhere.rule, anywhere.category) == ("guide", Scope("octo", "app"), None, None)
    on_finding = decide(Heard("learn", "print is fine here"), said(), id="g2", now=NOW).learning
    assert on_finding.scope.paths == ("src/cli/main.py",) and on_finding.fingerprint is None


@pytest.mark.parametrize("heard, who, expected", [
    (Heard("learn", "x"), said(may_write=False, author="mallory"), "`mallory` has no write access to octo/app"),
    (Heard("ignore"), said(may_write=False), "no write access"),
    (Heard("ignore"), said(None), "works in a reply to one of my findings"),
    (Heard("learn", ""), said(), "`@reviewer learn <what to remember>`"),
    (Heard("learn", "x" * 2001), said(), "at most 2000"),
    (Heard("learn", "\u202e\x00"), said(), "Tell me what to learn"),  # nothing left once cleaned
])
def test_refusals_say_why(heard, who, expected):
    decision = decide(heard, who, id="x", now=NOW)
    assert isinstance(decision, Refused) and expected in decision.reason


def test_a_thumbs_down_makes_the_ignore_learning_for_its_author():
    by_bob = Said("octo", "app", "bob", True, "reviewer", URL, FINDING)
    learned = from_reaction(by_bob, id="r1", now=NOW)
    assert learned == decide(Heard("ignore"), by_bob, id="r1", now=NOW)
    assert learned.learning.source == Source(URL, "bob")
    assert isinstance(from_reaction(Said("octo", "app", "eve", False, "reviewer", URL, FINDING), id="r2", now=NOW),
                      Refused)
    assert isinstance(from_reaction(Said("octo", "app", "bob", True, "reviewer", URL, None), id="r3", now=NOW), Refused)


def test_what_is_learned_is_clean_and_bounded():
    hostile = FindingRef("a/b.py", "evil\u202e text\x07 " + "word " * 600, ("r",), "bug", "not a fingerprint!")
    learning = decide(Heard("ignore", "because\x00"), said(hostile), id="h", now=NOW).learning
    assert "\u202e" not in learning.text and "\x07" not in learning.text and "\x00" not in learning.text
    assert len(learning.text) <= 2000 and learning.text.endswith("word")
    assert learning.fingerprint is None  # not one of ours: the API would refuse it


@pytest.mark.parametrize("path, glob, matches, misses", [
    ("src/cli/main.py", "src/cli/**", ["src/cli/x.py", "src/cli/a/b.py"], ["src/x.py", "src/client/x.py"]),
    ("main.py", "**", ["main.py", "a/b.py"], []),
    ("src/[legacy]/a.py", "src/\\[legacy\\]/**", ["src/[legacy]/b.py"], ["src/l/b.py"]),
    ("a{b,c}/*x?/f.py", "a\\{b,c\\}/\\*x\\?/**", ["a{b,c}/*x?/g.py"], ["ab/ax/g.py", "ab/*xy/g.py"]),
])
def test_a_directory_glob_matches_that_directory_only(path, glob, matches, misses):
    assert directory_glob(path) == glob
    assert all(glob_match(glob, p) for p in matches) and not any(glob_match(glob, p) for p in misses)
    assert glob_match(escape_glob(path), path)


def test_a_second_learning_of_the_same_thing_is_found():
    first = decide(Heard("ignore"), said(), id="a", now=NOW).learning
    again = decide(Heard("ignore", "still not an issue"), said(author="bob"), id="b", now=NOW).learning
    other_dir = decide(Heard("ignore"), said(FindingRef("lib/x.py", FINDING.message, ("no-print",), "style",
                                                        "cd" * 16)), id="c", now=NOW).learning
    assert duplicate_of(again, [first]) is first and duplicate_of(other_dir, [first]) is None
    guide = decide(Heard("learn", "Tabs  in Makefiles"), said(None), id="d", now=NOW).learning
    same = decide(Heard("learn", "tabs in makefiles"), said(None), id="e", now=NOW).learning
    assert duplicate_of(same, [first, guide]) is guide


def test_the_answer_says_what_was_learned_its_id_and_how_to_undo_it():
    learning = decide(Heard("ignore", "ask @octo/team"), said(), id="0123456789abcdef", now=NOW).learning
    text = answer(learning, console_url="https://reviewer.example.com/")
    assert text.startswith("Learned. From now on I leave out findings of rule `no-print` in `src/cli/**` of "
                           "`octo/app` that say what this one said:\n\n> Use logging instead of print().\n>\n> Why: ")
    assert "ask `@octo`/team" in text  # never a live mention
    assert text.endswith("Learning `0123456789abcdef`. To undo it: `reviewer learnings rm 0123456789abcdef`, or "
                         "delete it in the console: https://reviewer.example.com/console/learnings#0123456789abcdef.")
    guide = Learning("g", Scope("octo"), "guide", "Tabs in Makefiles.", NOW)
    assert answer(guide, again=True) == ("I knew this already. Later reviews of every file in every repository of "
                                         "`octo` are told:\n\n> Tabs in Makefiles.\n\nLearning `g`. To undo it: "
                                         "`reviewer learnings rm g`.")
