"""An analyzer's result as a finding that sits in the same ledger as a model's (pure).

It carries what a model's finding carries (path, lines, severity, category, message, a suggested
fix) and what only an analyzer has: its source `analyzer:<tool>`, the rule id, a help link, and a
fingerprint that stays the same across a re-upload and a second run of the same tool. That
fingerprint is the tool's own where SARIF gives one (`partialFingerprints`, else `fingerprints`:
CodeQL's `primaryLocationLineHash` follows the code as lines move), else ours, made as
bot/reviews/fingerprints.py makes a model finding's: the path, the code the finding is about as the
diff shows it (its line numbers shift with every push above it; the code does not), and the
normalised message, with the tool and rule beside them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from bot.analyzers.fixes import Fix
from bot.analyzers.model import AnalyzerResult
from bot.reviews.findings import Finding
from bot.reviews.fingerprints import normalise_message


@dataclass(frozen=True, slots=True)
class AnalyzerFinding:
    source: str  # "analyzer:<tool>"
    tool: str
    rule_id: str | None
    path: str
    start_line: int | None  # None: the finding is about the whole file (summary only)
    end_line: int | None
    severity: str
    category: str
    message: str
    fix: Fix | None  # its lines are start_line..end_line
    fingerprint: str
    help_uri: str | None = None
    rule_name: str | None = None

    @property
    def suggested_fix(self) -> str | None:
        """The suggestion's body; "" when the fix deletes the lines (see `fix.lines`)."""
        return None if self.fix is None else self.fix.replacement

    def to_finding(self) -> Finding:
        """As a finding of bot/reviews/findings.py, for shaping, tallies and approval: the tool and
        rule named in the message; a whole-file finding on line 1."""
        label = f"{self.tool} {self.rule_id}" if self.rule_id else self.tool
        return Finding(self.path, self.start_line or 1, self.end_line or self.start_line or 1, self.severity,
                       self.category, f"{self.message} ({label})", self.suggested_fix)


def fingerprint_of(result: AnalyzerResult, code: str) -> str:
    """32 hex digits; `code` is the finding's lines as the diff shows them, normalised ("" when
    they are not in the diff: the line range stands in)."""
    if result.partial_fingerprints:
        own = json.dumps(sorted(result.partial_fingerprints.items()), ensure_ascii=False)
        parts = ["sarif", result.tool, result.rule_id or "", result.path or "", own]
    else:
        anchor = code or f"lines {result.start_line}-{result.end_line}"
        parts = ["analyzer", result.tool, result.rule_id or "", result.path or "", anchor,
                 normalise_message(result.message)]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


def finding_of(result: AnalyzerResult, path: str, code: str, fix: Fix | None) -> AnalyzerFinding:
    """The finding of a result placed on `path`. A fix's lines become the finding's (a suggestion
    replaces exactly the lines its comment covers): `fixes.widen` made them cover the result's."""
    start, end = result.start_line, result.end_line
    if fix is not None:
        start, end = fix.start_line, fix.end_line
    return AnalyzerFinding(
        source=f"analyzer:{result.tool}", tool=result.tool, rule_id=result.rule_id, path=path,
        start_line=start, end_line=end, severity=result.severity, category=result.category,
        message=result.message, fix=fix, fingerprint=fingerprint_of(result, code),
        help_uri=result.help_uri, rule_name=result.rule_name,
    )
