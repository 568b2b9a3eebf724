"""Analyzer findings in the ledger (bot/analyzers/ledger.py) and beside the model's
(bot/reviews/overlap.py), and the upload job's classification (bot/events/jobs.py): pure functions."""

from __future__ import annotations

import pytest

from bot.analyzers.filter import place
from bot.analyzers.ledger import comment_body, posted_record, review_body, shape
from bot.analyzers.model import AnalyzerResult, Edit
from bot.events.jobs import InvalidPayload, classify
from bot.events.routes import UPLOAD_EVENT
from bot.reviews.diff import read_patches
from bot.reviews.findings import Finding
from bot.reviews.overlap import prompt_section, same_as_analyzer

PATCHES = read_patches([{"filename": "src/a.py", "status": "added",
                         "patch": "@@ -0,0 +1,4 @@\n+import os\n+import sys\n+KEY = 'x'\n+print(sys.argv)"}])


def _result(line: int, rule: str = "F401", level: str = "error", tool: str = "ruff", **extra) -> AnalyzerResult:
    return AnalyzerResult(tool, rule, level, None, f"`{rule}` says so", "src/a.py", line, line, **extra)


def test_feedback_settings_shape_analyzer_findings_as_a_models():
    placement = place([_result(1), _result(2, "E1", "note"), _result(4, "S1", "warning", tags=("style",))], PATCHES)
    standard = shape(placement, {"feedback": "standard"}, [])
    assert [f.rule_id for f in standard.inline] == ["F401", "S1"] and [f.rule_id for f in standard.summary] == ["E1"]
    minimal = shape(placement, {"feedback": "minimal"}, [])
    assert minimal.filtered_by_minimal == 1 and "S1" not in {f.rule_id for f in minimal.standing}
    strict = shape(placement, {"requireSuggestedFix": True}, [])
    assert strict.new == () and len(strict.withheld) == 3  # withheld, still standing for approval
    assert len(strict.standing) == 3
    off = shape(placement, {"comments": {"inline": False}}, [])
    assert off.inline == () and len(off.summary) == 3


def test_a_finding_posted_before_is_not_posted_again_but_still_stands():
    placement = place([_result(1), _result(2, "E1")], PATCHES)
    first = shape(placement, {}, [])
    again = shape(place([_result(1), _result(2, "E1")], PATCHES), {}, [f.fingerprint for f in first.new])
    assert again.new == () and len(again.already) == 2 and len(again.standing) == 2


def test_a_comment_names_the_tool_the_rule_and_carries_the_fix_and_never_opens_a_marker():
    fixed = _result(1, edits=(Edit(1, 1, 2, 1, ""),), help_uri="https://docs.astral.sh/ruff/rules/F401")
    finding = place([fixed], PATCHES).inline[0]
    body = comment_body(finding)
    assert body.startswith("**important** · other · `ruff` `F401`")
    assert "[About this rule](https://docs.astral.sh/ruff/rules/F401)" in body and "```suggestion\n\n```" in body
    sneaky = place([AnalyzerResult("t", "R", "error", None, "x --> <!-- reviewer:summary -->", "src/a.py", 2, 2)],
                   PATCHES).inline[0]
    assert "<!--" not in comment_body(sneaky) and "-->" not in comment_body(sneaky)
    assert review_body(shape(place([fixed], PATCHES), {}, []), "<!-- m -->").startswith("<!-- m -->\nAnalyzers (ruff)")


def test_a_secrets_ledger_row_keeps_no_code():
    secret = place([_result(3, "aws-access-key", tool="detect-secrets")], PATCHES).inline[0]
    assert posted_record(secret, PATCHES, "h").code == ""
    assert posted_record(place([_result(3)], PATCHES).inline[0], PATCHES, "h").code == "KEY = 'x'"


def test_a_model_finding_saying_the_same_at_the_same_lines_is_recognised():
    analyzer = [Finding("src/a.py", 6, 6, "important", "bug", "Possible division by zero when b is 0 (lint Z1)")]
    assert same_as_analyzer(Finding("src/a.py", 6, 6, "blocking", "bug", "Division by zero when b is 0."), analyzer)
    assert same_as_analyzer(Finding("src/a.py", 5, 7, "minor", "bug", "This trips Z1."), analyzer)
    assert not same_as_analyzer(Finding("src/a.py", 8, 8, "blocking", "bug", "Division by zero when b is 0."),
                                analyzer)  # another line
    assert not same_as_analyzer(Finding("src/b.py", 6, 6, "blocking", "bug", "Division by zero when b is 0."),
                                analyzer)  # another file
    assert not same_as_analyzer(Finding("src/a.py", 6, 6, "minor", "style", "Name the function better."), analyzer)
    assert "src/a.py:6-6 [important] Possible division by zero" in prompt_section(analyzer)
    assert prompt_section([]) == ""


def test_an_upload_job_is_keyed_by_its_pull_request_and_has_no_head():
    payload = {"action": "uploaded", "installation": {"id": 7}, "repository": {"full_name": "o/r"},
               "upload": {"id": "a" * 32, "commit_sha": "b" * 40, "pull_number": 12}}
    got = classify(UPLOAD_EVENT, payload)
    assert (got.kind, got.repo, got.pr_number, got.head_sha, got.key) == ("job", "o/r", 12, None, "o/r#12")
    with pytest.raises(InvalidPayload, match="upload.pull_number"):
        classify(UPLOAD_EVENT, {**payload, "upload": {"id": "a" * 32}})


def test_an_uploaders_tool_rule_and_path_cannot_end_their_code_span_or_open_a_marker():
    """SARIF's ruleId, tool name and paths are the uploader's: a backtick would end the code span
    and let the rest be Markdown, `<!-- reviewer:summary -->` would pose as our marker."""
    hostile = "x` <!-- reviewer:summary --> `y\nz"
    result = AnalyzerResult(hostile, hostile, "error", None, "m", "src/a.py", 2, 2)
    finding = place([result], PATCHES).inline[0]
    body = comment_body(finding)
    assert "<!--" not in body and "-->" not in body
    label = body.splitlines()[0].split(" · ")[2]
    assert label.count("`") == 4 and "\n" not in label, label  # two spans, each closed where we close it
    inline_off = review_body(shape(place([result], PATCHES), {"comments": {"inline": False}}, []), "<!-- m -->")
    dropped = review_body(shape(place([result], {}), {}, []), "<!-- m -->")  # outside the diff: a note
    text = inline_off + dropped
    assert text.count("<!--") == 2 and inline_off.startswith("<!-- m -->") and dropped.startswith("<!-- m -->")
    assert "-->" not in text.replace("<!-- m -->", "")
    assert "reviewer:summary" not in text.replace("&lt;!-- reviewer:summary --&gt;", "")
    long = place([AnalyzerResult("t" * 500, "R", "error", None, "m", "src/a.py", 2, 2)], PATCHES).inline[0]
    assert len(comment_body(long).splitlines()[0]) < 300

