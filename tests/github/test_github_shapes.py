"""The pure parts of bot/github: request bodies cut to GitHub's limits, route templates."""

from __future__ import annotations

import pytest

from bot.github import Annotation, CheckOutput, ReviewComment, completion_requests, fit
from bot.github.client import expand, route_name


def notes(n: int) -> tuple[Annotation, ...]:
    return tuple(Annotation("a.py", i, i, "notice", f"n{i}") for i in range(1, n + 1))


def test_annotations_go_50_per_request_and_the_conclusion_last():
    bodies = completion_requests("failure", CheckOutput("Title", "Summary", annotations=notes(120)))
    assert [len(b["output"]["annotations"]) for b in bodies] == [50, 50, 20]
    assert [b.get("conclusion") for b in bodies] == [None, None, "failure"]
    assert bodies[-1]["status"] == "completed" and "status" not in bodies[0]
    assert all(b["output"]["title"] == "Title" and b["output"]["summary"] == "Summary" for b in bodies)
    assert [a["message"] for b in bodies for a in b["output"]["annotations"]] == [f"n{i}" for i in range(1, 121)]


def test_no_annotations_is_one_request():
    (body,) = completion_requests("neutral", CheckOutput("Skipped", "Only ignored paths changed."))
    assert body == {"output": {"title": "Skipped", "summary": "Only ignored paths changed."},
                    "status": "completed", "conclusion": "neutral"}


def test_an_unknown_conclusion_or_level_is_a_programming_error():
    with pytest.raises(ValueError, match="conclusion 'passed'"):
        completion_requests("passed", CheckOutput("t", "s"))
    with pytest.raises(ValueError, match="annotation level 'error'"):
        Annotation("a", 1, 1, "error", "m").to_github()


def test_annotation_fields_are_made_acceptable():
    across = Annotation("a", 3, 5, "warning", "m", start_column=2, end_column=9).to_github()
    assert "start_column" not in across and "end_column" not in across  # GitHub: columns on one line only
    one_line = Annotation("a", 4, 4, "warning", "m", start_column=2, end_column=9).to_github()
    assert (one_line["start_column"], one_line["end_column"]) == (2, 9)
    backwards = Annotation("a", 0, -1, "failure", "x" * 20_000, title="t" * 300).to_github()
    assert (backwards["start_line"], backwards["end_line"]) == (1, 1)
    assert len(backwards["message"]) <= 16_000 and len(backwards["title"]) <= 255


def test_fit_keeps_what_fits_and_says_what_was_cut():
    assert fit("abc", 3) == "abc"
    text = "\n".join(f"row {i}" for i in range(20_000))
    cut = fit(text, 65_535, what="summary")
    assert len(cut) <= 65_535
    kept = cut.split("\n\n… ")[0]
    assert text.startswith(kept) and kept.endswith(f"row {kept.count(chr(10))}")  # cut at a line break
    assert f"summary cut to fit GitHub's limit: {len(text) - len(kept):,} of {len(text):,} characters not shown" in cut


def test_long_outputs_are_cut_in_every_request():
    long = "y" * 70_000
    (body,) = completion_requests("success", CheckOutput("t", long, text=long))
    assert len(body["output"]["summary"]) <= 65_535 and len(body["output"]["text"]) <= 65_535


def test_review_comment_shapes():
    assert ReviewComment("a.py", 7, "b").to_github() == {"path": "a.py", "line": 7, "side": "RIGHT", "body": "b"}
    spanning = ReviewComment("a.py", 7, "b", start_line=5).to_github()
    assert (spanning["start_line"], spanning["start_side"]) == (5, "RIGHT")


def test_route_templates_escape_values():
    assert expand("/repos/{owner}/{repo}/contents/{+path}", {"owner": "o", "repo": "r", "path": "a b/c#d.md"}) == (
        "/repos/o/r/contents/a%20b/c%23d.md")
    assert expand("/repos/{owner}/{repo}/commits/{ref}/check-runs", {"owner": "o", "repo": "r", "ref": "feat/x"}) == (
        "/repos/o/r/commits/feat%2Fx/check-runs")
    assert route_name("/repos/{owner}/{repo}/contents/{+path}") == "/repos/{owner}/{repo}/contents/{path}"
    with pytest.raises(KeyError, match="no value for {repo}"):
        expand("/repos/{owner}/{repo}", {"owner": "o"})
