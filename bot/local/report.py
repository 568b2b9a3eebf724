"""What a local review reports (pure): its findings with their sources, its usage, and the gate.

`findings_of` is the one adapter from what the review came to (the model's outcome and the
analyzers' findings) to the report's list; every output format (bot/local/render.py,
bot/local/sarif.py) and `--fail-on` read that list only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.analyzers.builtin.secrets import TOOL as SECRETS_TOOL
from bot.analyzers.findings import AnalyzerFinding
from bot.engine.usage import Usage
from bot.reviews.checkrun import report_for_plan
from bot.reviews.findings import SEVERITIES, Finding
from bot.reviews.outcome import ReviewOutcome

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

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "startLine": self.start_line, "endLine": self.end_line,
                               "severity": self.severity, "category": self.category, "message": self.message,
                               "source": self.source}
        if self.rule is not None:
            out["rule"] = self.rule
        if self.suggested_fix is not None:
            out["suggestedFix"] = self.suggested_fix
        return out


def _of_model(finding: Finding) -> Reported:
    return Reported(finding.path, finding.start_line, finding.end_line, finding.severity, finding.category,
                    finding.message, MODEL, finding.rules[0] if finding.rules else None, finding.suggested_fix)


def _of_analyzer(finding: AnalyzerFinding) -> Reported:
    start = finding.start_line or 1
    return Reported(finding.path, start, finding.end_line or start, finding.severity, finding.category,
                    finding.message, finding.source, finding.rule_id, finding.suggested_fix,
                    quotable=finding.tool != SECRETS_TOOL)


def findings_of(outcome: ReviewOutcome | None, analyzed: Iterable[AnalyzerFinding]) -> list[Reported]:
    """What a reader of the pull request would see: the analyzers' findings and the model's (those
    it posts, inline or in the summary), by path and line."""
    found = [*map(_of_analyzer, analyzed), *map(_of_model, outcome.findings if outcome is not None else ())]
    return sorted(found, key=lambda f: (f.path, f.start_line, f.end_line, SEVERITIES.index(f.severity)))


def at_or_above(findings: Iterable[Reported], threshold: str) -> list[Reported]:
    """The findings of `threshold`'s severity or a higher one (none for `never`)."""
    if threshold == "never":
        return []
    rank = SEVERITIES.index(threshold)
    return [f for f in findings if SEVERITIES.index(f.severity) <= rank]


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
    """docs/ci.md: 1 when a finding is at or above `fail_on`, the configuration is invalid, or (unless
    `never`) the review could not be finished; else 0."""
    if report.invalid_config is not None:
        return 1
    if report.status == "failed" and fail_on != "never":
        return 1
    return 1 if at_or_above(report.findings, fail_on) else 0
