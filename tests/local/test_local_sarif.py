"""`reviewer review --format sarif` writes what code scanning's upload takes: the log is valid
against the OASIS SARIF 2.1.0 schema (tests/data/sarif/, cut by scripts/cut_sarif_schema.py), and a
Reviewer server's own upload reader (bot/analyzers/upload.py) reads every finding back at its place,
with its rule and a severity of the same level."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from bot.analyzers.upload import Upload, decode_upload, encode_sarif
from bot.local.report import Report, Reported
from bot.local.sarif import LEVELS, to_sarif

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "data" / "sarif" / "sarif-schema-2.1.0.json")
                    .read_text())
HEAD = "4" * 40

FINDINGS = [
    Reported("src/calc.py", 6, 8, "blocking", "bug", "Division by zero.\nWhen b is 0.", "model",
             suggested_fix="    return 0"),
    Reported("src/calc.py", 6, 6, "important", "security", "Returns a secret.", "model", rule="no-secrets"),
    Reported("docs/read me.md", 2, 2, "minor", "docs", "A typo.", "model"),
    Reported("src/ünï/cöde.py", 1, 1, "nit", "style", "I001 Import block is un-sorted", "analyzer:ruff",
             rule="I001"),
    Reported("deploy.sh", 3, 3, "minor", "other", "SC2086 quote it", "analyzer:shellcheck", rule="SC2086"),
]


def _report(findings: list[Reported]) -> Report:
    return Report("main", "feature", "1" * 40, HEAD, "completed", {"errors": []}, findings)


def validate(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER).validate(log)


def upload(log: dict) -> Upload:
    body = {"commit_sha": HEAD, "ref": "refs/pull/7/head", "sarif": encode_sarif(log)}
    read = decode_upload(json.loads(json.dumps(body)))
    assert isinstance(read, Upload), read
    return read


@pytest.mark.parametrize("findings", [FINDINGS, []])
def test_the_log_is_valid_sarif_2_1_0(findings):
    validate(to_sarif(_report(findings), "1.2.3"))


def test_the_schema_refuses_what_is_not_sarif():
    log = to_sarif(_report(FINDINGS), "1.2.3")
    log["runs"][0]["results"][0]["level"] = "blocking"  # the check can fail: a level SARIF does not have
    with pytest.raises(jsonschema.ValidationError):
        validate(log)


def test_our_upload_reads_every_finding_back():
    read = upload(to_sarif(_report(FINDINGS), "1.2.3"))
    assert read.tools == ("Reviewer",)
    got = [(r.path, r.start_line, r.end_line, r.rule_id, r.level, r.severity, r.category) for r in read.results]
    assert got == [
        ("src/calc.py", 6, 8, "reviewer/bug", "error", "important", "bug"),
        ("src/calc.py", 6, 6, "reviewer/no-secrets", "error", "important", "security"),
        ("docs/read me.md", 2, 2, "reviewer/docs", "warning", "minor", "docs"),
        ("src/ünï/cöde.py", 1, 1, "ruff/I001", "note", "nit", "style"),
        ("deploy.sh", 3, 3, "shellcheck/SC2086", "warning", "minor", "other"),
    ]
    assert read.results[0].message == "Division by zero.\nWhen b is 0."
    assert all(r.partial_fingerprints for r in read.results)


def test_levels_follow_the_severities():
    assert LEVELS == {"blocking": "error", "important": "error", "minor": "warning", "nit": "note"}
    log = to_sarif(_report(FINDINGS), "1.2.3")
    assert [r["level"] for r in log["runs"][0]["results"]] == ["error", "error", "warning", "note", "warning"]
    assert [r["properties"]["severity"] for r in log["runs"][0]["results"]] == [
        "blocking", "important", "minor", "nit", "minor"]
