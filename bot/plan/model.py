"""The review plan: what the app posts, the engine follows and `reviewer plan` prints.

`Plan.to_json()` is docs/plan.md's "`reviewer plan --format json`" object, key for key and in that
order, plus one key after them: `notes`, a list of sentences for people (an admin entry left out
because its file is missing, the filter that skipped the review, agent files over the cap). Notes
never change the decision; errors are what the check run annotates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.config.model import Comments, Models
from bot.documents.diagnostics import Diagnostic

PLAN_VERSION = 1
Decision = Literal["review", "skip"]
SkipReason = Literal["disabled", "filtered", "ignored-only", "invalid-config"]
ErrorSource = Literal["merge-base", "head", "admin"]
# How notes name the layer an entry came from.
LAYER_NAMES = {"instance": "the instance configuration", "account": "the account configuration",
               "repository": "the repository's configuration", "default": "the defaults"}


@dataclass(frozen=True, slots=True)
class PlanError:
    """A configuration error as the check run annotates it: which file, which version, where."""

    path: str
    source: ErrorSource
    line: int
    column: int
    pointer: str
    code: str
    message: str

    @classmethod
    def from_diagnostic(cls, path: str, source: ErrorSource, diag: Diagnostic) -> PlanError:
        return cls(path, source, diag.line, diag.column, diag.pointer, diag.code, diag.message)

    def to_json(self) -> dict:
        return {"path": self.path, "source": self.source, "line": self.line, "column": self.column,
                "pointer": self.pointer, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class PlannedRule:
    id: str
    source: str  # instance | account | repository
    rule: str | None
    file: str | None
    matched_paths: tuple[str, ...]

    def to_json(self) -> dict:
        return {"id": self.id, "source": self.source, "rule": self.rule, "file": self.file,
                "matchedPaths": list(self.matched_paths)}


@dataclass(frozen=True, slots=True)
class PlannedContext:
    path: str
    description: str
    source: str
    matched_paths: tuple[str, ...]

    def to_json(self) -> dict:
        return {"path": self.path, "description": self.description, "source": self.source,
                "matchedPaths": list(self.matched_paths)}


@dataclass(frozen=True, slots=True)
class Plan:
    decision: Decision
    skip_reason: SkipReason | None
    models: Models
    feedback: str
    comments: Comments
    require_suggested_fix: bool
    approve: bool
    files: tuple[str, ...]  # changed and not ignored, in the pull request's order
    ignored: tuple[str, ...]
    rules: tuple[PlannedRule, ...] = ()
    context: tuple[PlannedContext, ...] = ()
    agent_files: tuple[str, ...] = ()
    errors: tuple[PlanError, ...] = ()
    notes: tuple[str, ...] = ()
    # For people (`reviewer plan`'s text form): each rule or context entry that does not apply,
    # and why. Not in the JSON: the check run lists what applies.
    left_out: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {
            "planVersion": PLAN_VERSION,
            "decision": self.decision,
            "skipReason": self.skip_reason,
            "models": self.models.to_json(),
            "feedback": self.feedback,
            "comments": self.comments.to_json(),
            "requireSuggestedFix": self.require_suggested_fix,
            "approve": self.approve,
            "files": list(self.files),
            "ignored": list(self.ignored),
            "rules": [rule.to_json() for rule in self.rules],
            "context": [entry.to_json() for entry in self.context],
            "agentFiles": list(self.agent_files),
            "errors": [error.to_json() for error in self.errors],
            "notes": list(self.notes),
        }
