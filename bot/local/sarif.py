"""A local review's findings as one SARIF 2.1.0 log (pure), for GitHub's code scanning
(`github/codeql-action/upload-sarif`) and for a Reviewer server's upload (`reviewer upload-sarif`).

One run, tool `Reviewer`, whose rules are the findings' rule ids: a model finding's is `reviewer/`
and the repository rule it cites (else its category), an analyzer finding's `<tool>/<rule>`. Levels:
blocking and important are `error`, minor `warning`, nit `note`; each result keeps our severity,
category and source in its `properties`, and a `partialFingerprints` entry (the finding's path,
lines-independent message and rule) so that code scanning follows it from one upload to the next.
A Reviewer server reads the levels back as SARIF's (error → important, warning → minor, note →
nit): a blocking finding uploaded there is important (docs/analyzers.md).
Locations are paths relative to the repository root, as URIs.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

from bot.local.report import MODEL, Report, Reported
from bot.reviews.fingerprints import normalise_message

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"blocking": "error", "important": "error", "minor": "warning", "nit": "note"}
FINGERPRINT_KEY = "reviewerFinding/v1"


def rule_id(finding: Reported) -> str:
    if finding.source == MODEL:
        return f"reviewer/{finding.rule or finding.category}"
    tool = finding.source.removeprefix("analyzer:")
    return f"{tool}/{finding.rule}" if finding.rule else tool


def _rule(rule: str, finding: Reported) -> dict[str, Any]:
    return {"id": rule, "shortDescription": {"text": rule},
            "defaultConfiguration": {"level": LEVELS[finding.severity]}, "properties": {"tags": [finding.category]}}


def _fingerprint(finding: Reported, rule: str) -> str:
    text = "\x00".join([finding.path, rule, normalise_message(finding.message)])
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()[:32]


def _result(finding: Reported, rule: str, index: int) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": finding.start_line, "endLine": finding.end_line}
    return {
        "ruleId": rule, "ruleIndex": index, "level": LEVELS[finding.severity],
        "message": {"text": finding.message.strip() or rule},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": quote(finding.path, safe="/")},
                                            "region": region}}],
        "partialFingerprints": {FINGERPRINT_KEY: _fingerprint(finding, rule)},
        "properties": {"severity": finding.severity, "category": finding.category, "source": finding.source},
    }


def to_sarif(report: Report, version: str) -> dict[str, Any]:
    """The SARIF log of `report`; `version` is this package's (the driver's version)."""
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results = []
    for finding in report.findings:
        rule = rule_id(finding)
        if rule not in index:
            index[rule] = len(rules)
            rules.append(_rule(rule, finding))
        results.append(_result(finding, rule, index[rule]))
    run = {"tool": {"driver": {"name": "Reviewer", "semanticVersion": version, "rules": rules}},
           "results": results,
           "properties": {"base": report.base, "head": report.head, "mergeBase": report.merge_base,
                          "headSha": report.head_sha, "status": report.status}}
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
