"""reviewdog's filter modes over a pull request's diff; fixes as suggestions; fingerprints that last."""

import pytest

from bot.analyzers.filter import MODES, place
from bot.analyzers.findings import fingerprint_of
from bot.analyzers.fixes import Fix, line_fix, widen
from bot.analyzers.model import AnalyzerResult, Edit
from bot.analyzers.sarif import read_sarif
from bot.reviews.diff import read_patches
from tests.support.analyzers_support import load

# src/a.py: lines 1-3 context, 4-5 added, 6 context (hunk 1); 20 context, 21 added (hunk 2).
PATCH = ("@@ -1,4 +1,6 @@\n one\n two\n three\n+four = 4\n+five = 5\n six\n"
         "@@ -17,2 +19,3 @@\n nineteen\n twenty\n+twenty_one = 21\n")
PATCHES = read_patches([{"filename": "src/a.py", "status": "modified", "patch": PATCH},
                        {"filename": "bin.dat", "status": "modified"}])


def at(line, end=None, path="src/a.py", tool="t", **kw) -> AnalyzerResult:
    fields = {"rule_id": "R", "level": "warning", "security_severity": None, "message": f"at {line}", **kw}
    return AnalyzerResult(tool=tool, path=path, start_line=line, end_line=end or line, **fields)


RESULTS = [at(4), at(2), at(10), at(5, 20), at(None, path="src/a.py"), at(1, path="other.py"), at(1, path=None),
           at(1, path="bin.dat")]


def where(placement):
    return ([f.message for f in placement.inline], [f.message for f in placement.summary], sum(placement.dropped.values()))


@pytest.mark.parametrize("mode, inline, summary, dropped", [
    ("added", ["at 4"], ["at 5"], 6),
    ("diff_context", ["at 4"], ["at 2", "at 5"], 5),
    ("file", ["at 4"], ["at 2", "at 10", "at 5", "at None", "at 1"], 2),
    ("nofilter", ["at 4"], ["at 2", "at 10", "at 5", "at None", "at 1", "at 1", "at 1"], 0),
])
def test_each_mode_sends_results_inline_to_the_summary_or_drops_them(mode, inline, summary, dropped):
    assert where(place(RESULTS, PATCHES, mode=mode)) == (inline, summary, dropped)


def test_the_default_mode_is_added_and_an_unknown_mode_is_an_error():
    assert where(place(RESULTS, PATCHES)) == where(place(RESULTS, PATCHES, mode="added"))
    assert MODES == ("added", "diff_context", "file", "nofilter")
    with pytest.raises(ValueError, match="not one of"):
        place(RESULTS, PATCHES, mode="everything")


def test_a_result_crossing_hunks_on_an_added_line_goes_to_the_summary():
    assert where(place([at(20, 21), at(5, 19), at(21, 22)], PATCHES)) == (["at 20"], ["at 5", "at 21"], 0)


def test_the_cap_keeps_the_most_severe_inline_per_tool_and_counts_the_rest():
    results = [at(4, level="note"), at(5, level="error"), at(21, level="warning"), at(4, tool="u")]
    placement = place(results, PATCHES, max_inline_per_tool=2)
    assert [(f.tool, f.start_line) for f in placement.inline] == [("t", 5), ("t", 21), ("u", 4)]
    assert [f.start_line for f in placement.summary] == [4] and placement.over_cap == {"t": 1}


def test_the_same_result_twice_is_placed_once():
    placement = place([at(4), at(4)], PATCHES)
    assert len(placement.inline) == 1 and placement.duplicates == 1


def test_a_fix_becomes_a_suggestion_on_the_lines_it_replaces():
    quoted = at(4, edits=(Edit(4, 8, 4, 8, "("), Edit(4, 9, 4, 9, ")")))
    deleted = at(5, edits=(Edit(5, 1, 6, 1, ""),))
    unknown = at(21, edits=(Edit(21, 1, 23, 1, ""),))  # line 22 is not in the diff
    fixed, gone, none = place([quoted, deleted, unknown], PATCHES).inline
    assert fixed.fix == Fix(4, 4, ("four = (4)",)) and fixed.suggested_fix == "four = (4)"
    assert gone.fix == Fix(5, 5, ()) and gone.suggested_fix == ""
    assert none.fix is None and none.suggested_fix is None


def test_a_fix_on_other_lines_than_the_result_widens_to_cover_both():
    result = at(4, 5, edits=(Edit(5, 1, 5, None, "five = 6"),))
    [found] = place([result], PATCHES).inline
    assert found.fix == Fix(4, 5, ("four = 4", "five = 6")) and (found.start_line, found.end_line) == (4, 5)


def test_line_fix_refuses_overlapping_edits_and_joined_lines():
    lines = {1: "abc", 2: "def"}
    assert line_fix([Edit(1, 1, 1, 3, "x"), Edit(1, 2, 1, 4, "y")], lines) is None
    assert line_fix([Edit(1, 3, 2, 1, "")], lines) is None  # removes line 1's break: joins it to line 2
    assert line_fix([Edit(1, 1, 1, None, "")], lines) == Fix(1, 1, ("",))  # an emptied line is not a deletion
    assert widen(Fix(2, 2, ("x",)), 1, 2, {2: "def"}) is None


def test_a_fingerprint_is_the_tools_own_else_follows_the_code_not_the_line_number():
    moved = read_patches([{"filename": "src/a.py", "patch": "@@ -1,1 +10,2 @@\n one\n+four = 4\n"}])
    before = place([at(4, message="m")], PATCHES).inline[0].fingerprint
    after = place([at(11, message="M.")], moved).inline[0].fingerprint
    assert before == after and len(before) == 32
    assert place([at(4, message="another")], PATCHES).inline[0].fingerprint != before
    own = at(4, partial_fingerprints={"primaryLocationLineHash": "abc:1"})
    assert fingerprint_of(own, "x") == fingerprint_of(at(99, partial_fingerprints={"primaryLocationLineHash": "abc:1"}), "")


def test_a_reupload_of_the_same_sarif_gives_the_same_fingerprints():
    patches = read_patches([{"filename": "app/views.py", "patch": "@@ -10,0 +10,12 @@\n" + "+x\n" * 12}])
    first = place(read_sarif(load("semgrep.sarif")).results, patches, mode="file")
    again = place(read_sarif(load("semgrep.sarif")).results, patches, mode="file")
    assert [f.fingerprint for f in first.findings] == [f.fingerprint for f in again.findings]
    assert len({f.fingerprint for f in first.findings}) == 2


def test_an_analyzer_finding_is_a_finding_of_the_ledger():
    [found] = place([at(4, level="error", tags=("security",), help_uri="https://x.example/R")], PATCHES).inline
    finding = found.to_finding()
    assert (finding.path, finding.start_line, finding.end_line, finding.severity, finding.category) == (
        "src/a.py", 4, 4, "important", "security")
    assert finding.message == "at 4 (t R)" and found.source == "analyzer:t"
    whole = place([at(None)], PATCHES, mode="file").summary[0].to_finding()
    assert (whole.start_line, whole.end_line) == (1, 1)
