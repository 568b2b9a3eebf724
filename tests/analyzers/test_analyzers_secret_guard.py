"""A line holding a secret, for every other finding (bot/analyzers/secret_guard.py with
bot/reviews/secret_lines.py): no suggestion on it from any tool or the model, no code of it kept,
and fingerprints made without the value — two keys on the same line give the same fingerprints."""

from __future__ import annotations

import asyncio

from bot.analyzers.builtin import secret_scan
from bot.analyzers.feed import posted_record
from bot.analyzers.filter import place
from bot.analyzers.model import AnalyzerResult, Edit
from bot.analyzers.secret_guard import flagged, guarded
from bot.reviews.diff import read_patches
from bot.reviews.findings import Finding
from bot.reviews.fingerprints import fingerprint

KEYS = ("AKIA" + "Q3EGRT5JXMPLVW4Z", "AKIA" + "J7HMXQ2WZR5TNVB4")  # split: no scanner flags this file


def _patches(key: str):
    text = f"+import os\n+AWS_ACCESS_KEY_ID = '{key}'\n+REGION = os.environ['REGION']\n"
    return read_patches([{"filename": "config/settings.py", "status": "added", "patch": "@@ -0,0 +1,3 @@\n" + text}])


def _ruff(line: int, text: str) -> AnalyzerResult:
    """A fix of the single quotes on `line` (whose text is `text`): as a suggestion, the whole line."""
    quotes = [n + 1 for n, char in enumerate(text) if char == "'"]
    return AnalyzerResult(tool="ruff", rule_id="Q000", level="warning", security_severity=None,
                          message="Single quotes found but double quotes preferred", path="config/settings.py",
                          start_line=line, end_line=line,
                          edits=tuple(Edit(line, column, line, column + 1, '"') for column in quotes))


def _analyzed(key: str):
    patches = _patches(key)
    secrets = flagged(asyncio.run(secret_scan(patches)).results)
    clean = secrets.blanked(patches)
    lines = [_ruff(2, f"AWS_ACCESS_KEY_ID = '{key}'"), _ruff(3, "REGION = os.environ['REGION']")]
    placement = guarded(place(lines, clean, mode="nofilter"), secrets)
    return secrets, clean, placement


def test_a_fix_on_a_secrets_line_is_dropped_and_one_elsewhere_kept():
    secrets, _, placement = _analyzed(KEYS[0])
    assert secrets.lines == {("config/settings.py", 2)}
    on_key, elsewhere = sorted(placement.inline, key=lambda f: f.start_line or 0)
    assert (on_key.start_line, on_key.fix) == (2, None)
    assert elsewhere.fix is not None and elsewhere.fix.lines == ('REGION = os.environ["REGION"]',)


def test_analyzer_fingerprints_and_kept_code_are_made_without_the_value():
    first, second = (_analyzed(key) for key in KEYS)
    assert [f.fingerprint for f in first[2].inline] == [f.fingerprint for f in second[2].inline]
    for _, clean, placement in (first, second):
        for finding in placement.inline:
            record = posted_record(finding, clean, "abc")
            assert all(key not in record.code for key in KEYS) and "AWS_ACCESS_KEY_ID" not in record.code


def test_the_secret_scanners_own_fingerprint_is_made_without_the_value():
    found = [asyncio.run(secret_scan(_patches(key))).results for key in KEYS]
    [one], [other] = found
    assert one.partial_fingerprints == other.partial_fingerprints and one.partial_fingerprints


def test_a_model_finding_on_the_line_loses_its_suggestion_and_its_fingerprint_ignores_the_value():
    prints = []
    for key in KEYS:
        patches = _patches(key)
        secrets = flagged(asyncio.run(secret_scan(patches)).results)
        quoted = Finding("config/settings.py", 2, 2, "minor", "maintainability", "Read it from the environment.",
                         suggested_fix=f"AWS_ACCESS_KEY_ID = os.environ.get('KEY', '{key}')")
        elsewhere = Finding("config/settings.py", 3, 3, "nit", "style", "Use a constant.", suggested_fix="REGION = R")
        guarded_findings = secrets.without_fixes([quoted, elsewhere])
        assert [f.suggested_fix for f in guarded_findings] == [None, "REGION = R"]
        record = fingerprint(quoted, secrets.blanked(patches))
        assert key not in record.code
        prints.append(record.fingerprint)
    assert prints[0] == prints[1]
