"""Analyzer findings fed to the head's ledger (bot/analyzers/feed.py) and beside the model's
(bot/reviews/overlap.py), and the upload job's classification (bot/events/jobs.py): pure functions."""

from __future__ import annotations

import pytest

from bot.analyzers.feed import comment_body, entries, posted_record
from bot.analyzers.filter import place
from bot.analyzers.model import AnalyzerResult, Edit
from bot.events.jobs import InvalidPayload, classify
from bot.events.routes import UPLOAD_EVENT
from bot.reviews.diff import read_patches
from bot.reviews.findings import Finding
from bot.reviews.fingerprints import PostedFinding
from bot.reviews.ledger import build
from bot.reviews.overlap import prompt_section, same_as_analyzer
from bot.reviews.voice import upload_body

PATCHES = read_patches([{"filename": "src/a.py", "status": "added",
                         "patch": "@@ -0,0 +1,4 @@\n+import os\n+import sys\n+KEY = 'x'\n+print(sys.argv)"}])


def _result(line: int, rule: str = "F401", level: str = "error", tool: str = "ruff", **extra) -> AnalyzerResult:
    return AnalyzerResult(tool, rule, level, None, f"`{rule}` says so", "src/a.py", line, line, **extra)


def _fed(results, plan=None, posted=(), patches=PATCHES):
    return entries(place(results, patches), plan or {}, posted, patches)


def test_feedback_settings_shape_analyzer_findings_as_a_models():
    results = [_result(1), _result(2, "E1", "note"), _result(4, "S1", "warning", tags=("style",))]
    standard = _fed(results, {"feedback": "standard"})
    assert [(e.rule, e.inline) for e in standard.entries] == [("F401", True), ("E1", False), ("S1", True)]
    assert {e.source for e in standard.entries} == {"analyzer:ruff"} and all(e.in_diff for e in standard.entries)
    minimal = _fed(results, {"feedback": "minimal"})
    assert "S1" not in {e.rule for e in minimal.entries}
    assert "1 analyzer finding(s) left out by `feedback: minimal`" in minimal.notes
    strict = _fed(results, {"requireSuggestedFix": True})
    assert strict.new == () and all(e.withheld for e in strict.entries)  # withheld, still standing for approval
    off = _fed(results, {"comments": {"inline": False}})
    assert not any(e.inline for e in off.entries) and len(off.new) == 3


def test_a_finding_posted_before_is_not_posted_again_but_still_stands():
    first = _fed([_result(1), _result(2, "E1")])
    posted = [e.record("h1") for e in first.new]
    again = _fed([_result(1), _result(2, "E1")], posted=posted)
    assert again.new == () and all(e.posted_before and not e.inline for e in again.entries)
    assert len(build("h2", again.entries).entries) == 2


def test_a_finding_another_source_posted_at_the_same_lines_with_the_same_rule_is_posted_before():
    """CI's ruff and the built-in ruff: the same rule at the same line is one finding, whatever
    their fingerprints say (another tool name, another message)."""
    builtin = PostedFinding("other-print", "src/a.py", "minor", "other", "import os", "`F401` unused (ruff F401)",
                            "h1", "analyzer:ruff", "F401", 1, 1)
    elsewhere = PostedFinding("p2", "src/a.py", "minor", "other", "", "x", "h1", "analyzer:ruff", "F401", 3, 4)
    model = PostedFinding("p3", "src/a.py", "minor", "other", "", "x", "h1", "model", None, 2, 2)
    uploaded = _fed([_result(1, tool="Ruff"), _result(2, "F401"), _result(2, "E1")],
                    posted=[builtin, elsewhere, model])
    assert [(e.finding.start_line, e.rule, e.posted_before) for e in uploaded.entries] == [
        (1, "F401", True), (2, "F401", False), (2, "E1", False)]
    assert "1 analyzer finding(s) were posted on this pull request before" in uploaded.notes


def test_a_linters_error_is_minor_and_the_admin_file_maps_rules_up_or_down():
    from bot.analyzers.severity import mapped, severity_rules
    ruff = _result(1)  # ruff marks every rule `error`
    assert ruff.severity == "minor"
    assert _result(1, tool="ESLint").severity == "minor" and _result(1, tool="codeql").severity == "important"
    secret = AnalyzerResult("ruff", "S105", "error", 9.1, "hard-coded password", "src/a.py", 3, 3)
    assert secret.severity == "blocking"  # security-severity says more
    rules = severity_rules({"RUFF/I*": "nit", "ruff/S*": "important", "codeql/py/sql-*": "blocking", "ruff/*": "minor"})
    results = [_result(1, "I001"), secret, _result(2, "py/sql-injection", tool="CodeQL"), _result(3, "E1"),
               _result(4, "X1", tool="semgrep")]
    assert [r.severity for r in mapped(results, rules)] == ["nit", "important", "blocking", "minor", "important"]


def test_a_comment_names_the_tool_the_rule_and_carries_the_fix_and_never_opens_a_marker():
    fixed = _result(1, edits=(Edit(1, 1, 2, 1, ""),), help_uri="https://docs.astral.sh/ruff/rules/F401")
    finding = place([fixed], PATCHES).inline[0]
    body = comment_body(finding)
    assert body.startswith("**minor** · other · `ruff` `F401`")  # a linter's `error`: minor at most
    assert "[About this rule](https://docs.astral.sh/ruff/rules/F401)" in body and "```suggestion\n\n```" in body
    sneaky = place([AnalyzerResult("t", "R", "error", None, "x --> <!-- reviewer:summary -->", "src/a.py", 2, 2)],
                   PATCHES).inline[0]
    assert "<!--" not in comment_body(sneaky) and "-->" not in comment_body(sneaky)
    body = upload_body(build("h" * 40, _fed([fixed]).entries), "<!-- m -->")
    assert body.startswith("<!-- m -->\n**Reviewer**: an upload (ruff) adds 1 finding at `hhhhhhh`, 1 inline.")


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
    inline_off = upload_body(build("h", _fed([result], {"comments": {"inline": False}}).entries), "<!-- m -->")
    dropped = upload_body(build("h", _fed([result], patches={}).entries), "<!-- m -->")  # outside the diff
    text = inline_off + dropped
    assert text.count("<!--") == 2 and inline_off.startswith("<!-- m -->") and dropped.startswith("<!-- m -->")
    assert "-->" not in text.replace("<!-- m -->", "")
    assert "reviewer:summary" not in text.replace("&lt;!-- reviewer:summary --&gt;", "")
    long = place([AnalyzerResult("t" * 500, "R", "error", None, "m", "src/a.py", 2, 2)], PATCHES).inline[0]
    assert len(comment_body(long).splitlines()[0]) < 300

