"""What a local review reports (pure): its findings with their sources, its usage, and the gate.

`findings_of` is the one adapter from what the review came to (the head's ledger: the model's
and the analyzers' findings, each once) to the report's list; every output format
(bot/local/render.py, bot/local/sarif.py) reads that list, and `--fail-on` the severities that
decide (`deciding_of`: the findings on the diff, as the check run counts them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.analyzers.builtin.secrets import TOOL as SECRETS_TOOL
from bot.engine.usage import Usage
from bot.reviews.checkrun import report_for_plan
from bot.reviews.findings import SEVERITIES
from bot.reviews.ledger import Entry, Ledger

FAIL_ON = (*SEVERITIES, "never")  # blocking, important, minor, nit, never
MODEL = "model"


@dataclass(frozen=True, slots=True)
class Reported:
    """One finding as the review would post it, with where it came from: `model`, or
    `analyzer:<tool>` with the tool's rule id."""

    path: str
    start_line: int
    end_line: int
    severity: str
    category: str
    message: str
    source: str
    rule: str | None = None
    suggested_fix: str | None = None
    quotable: bool = True  # False: its lines hold a secret, never shown (docs/analyzers.md)
    in_diff: bool = True  # False: none of its lines is in the diff, so it decides nothing

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "startLine": self.start_line, "endLine": self.end_line,
                               "severity": self.severity, "category": self.category, "message": self.message,
                               "source": self.source}
        if self.rule is not None:
            out["rule"] = self.rule
        if self.suggested_fix is not None:
            out["suggestedFix"] = self.suggested_fix
        return out


def _of_entry(entry: Entry) -> Reported:
    f = entry.finding
    rule = entry.rule or (f.rules[0] if f.rules else None)
    return Reported(f.path, f.start_line, f.end_line, f.severity, f.category, entry.text, entry.source, rule,
                    f.suggested_fix, quotable=entry.tool != SECRETS_TOOL, in_diff=entry.in_diff)


def findings_of(ledger: Ledger) -> list[Reported]:
    """The one adapter from what a review came to (the head's ledger, bot/reviews/ledger.py) to the
    report: the findings that stand at the head, every source, each once, as a reader of the pull
    request sees them (a finding `requireSuggestedFix` withholds is never shown), by path and line."""
    shown = [_of_entry(e) for e in ledger.entries if not e.withheld]
    return sorted(shown, key=lambda f: (f.path, f.start_line, f.end_line, SEVERITIES.index(f.severity)))


def deciding_of(ledger: Ledger) -> tuple[str, ...]:
    """The severities that decide, as they decide the check run: the findings on the diff, those
    `requireSuggestedFix` withholds included."""
    return tuple(e.finding.severity for e in ledger.deciding)


def at_or_above(severities: Iterable[str], threshold: str) -> bool:
    """Whether one of `severities` is `threshold` or a higher one (never for `never`)."""
    if threshold == "never":
        return False
    rank = SEVERITIES.index(threshold)
    return any(SEVERITIES.index(s) <= rank for s in severities)


@dataclass(frozen=True)
class Spent:
    """The review's model calls and tokens (the providers' own counts)."""

    calls: int = 0
    prompt_tokens: int = 0
    answer_tokens: int = 0
    models: tuple[str, ...] = ()

    @classmethod
    def of(cls, usage: Usage) -> Spent:
        return cls(usage.calls, usage.prompt_tokens, usage.answer_tokens, tuple(usage.models))

    def to_json(self) -> dict[str, int]:
        return {"calls": self.calls, "promptTokens": self.prompt_tokens, "answerTokens": self.answer_tokens}


@dataclass(frozen=True)
class Report:
    """A local review, as every output format prints it. `status`: `completed` (the model
    reviewed), `analyzers-only` (no model configured: the analyzers' findings alone), `skipped`
    (the plan skips the change), `failed` (no model gave a usable answer); `reason` says why."""

    base: str
    head: str
    merge_base: str
    head_sha: str
    status: str
    plan: dict
    findings: Sequence[Reported] = ()
    deciding: Sequence[str] = ()  # the severities that decide (the findings on the diff): --fail-on reads these
    spent: Spent = field(default_factory=Spent)
    notes: Sequence[str] = ()
    reason: str | None = None  # failed, skipped, analyzers-only: why

    @property
    def invalid_config(self) -> str | None:
        """What the pull request's check run would say of an invalid configuration (the merge
        base's, which skips the review, or a changed one's, which fails the run while the review
        goes on), or None: the same decision, bot/reviews/checkrun.py's."""
        planned = report_for_plan(self.plan)
        return planned.title if planned.conclusion == "failure" else None

    def to_json(self) -> dict[str, Any]:
        return {"base": self.base, "head": self.head, "mergeBase": self.merge_base, "headSha": self.head_sha,
                "status": self.status, "reason": self.reason, "findings": [f.to_json() for f in self.findings],
                "plan": self.plan, "usage": self.spent.to_json(), "notes": list(self.notes)}


def exit_code(report: Report, fail_on: str) -> int:
    """docs/ci.md: 1 when a finding on the diff is at or above `fail_on`, the configuration is
    invalid, or (unless `never`) the review could not be finished; else 0."""
    if report.invalid_config is not None:
        return 1
    if report.status == "failed" and fail_on != "never":
        return 1
    return 1 if at_or_above(report.deciding, fail_on) else 0
