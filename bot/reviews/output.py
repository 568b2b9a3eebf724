"""What a review produces, shaped for the poster: GitHub request bodies and check-run parts.

The engine does no GitHub I/O; these shapes carry exactly what the REST API takes, so the poster
only sends them: `review_request()` is the body of "create a review"
(`POST /repos/{o}/{r}/pulls/{n}/reviews`), an `ApprovalAction` knows its approve/dismiss body, and the
annotations are check-run annotations as they go in `output.annotations`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from bot.reviews.findings import Finding
from bot.reviews.fingerprints import PostedFinding

SUMMARY_MARKER = "<!-- reviewer:summary -->"  # finds the one summary comment to update in place


@dataclass(frozen=True, slots=True)
class InlineComment:
    path: str
    line: int
    body: str
    start_line: int | None = None  # set for a multi-line comment
    side: str = "RIGHT"

    def to_json(self) -> dict:
        data = {"path": self.path, "line": self.line, "side": self.side, "body": self.body}
        if self.start_line is not None and self.start_line != self.line:
            data.update(start_line=self.start_line, start_side=self.side)
        return data


@dataclass(frozen=True, slots=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    annotation_level: Literal["failure", "warning", "notice"]
    message: str
    title: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Counts:
    """Findings that were not posted as the model gave them, by reason."""

    malformed: int = 0  # broke the findings schema
    over_limit: int = 0  # past the most findings one review posts
    without_fix: int = 0  # requireSuggestedFix: no suggested fix, not posted
    outside_diff: int = 0  # lines not in a hunk of the diff: moved to the summary
    nits_in_summary: int = 0  # feedback standard: nits kept to the summary
    filtered_by_minimal: int = 0  # feedback minimal: category not bug/risk/breaking/security
    unknown_rule_ids: int = 0  # rule ids no applying rule has, removed from their findings
    already_posted: int = 0  # posted on the pull request before (same path, code and message)

    def to_json(self) -> dict:
        return {
            "malformed": self.malformed,
            "overLimit": self.over_limit,
            "withoutFix": self.without_fix,
            "outsideDiff": self.outside_diff,
            "nitsInSummary": self.nits_in_summary,
            "filteredByMinimal": self.filtered_by_minimal,
            "unknownRuleIds": self.unknown_rule_ids,
            "alreadyPosted": self.already_posted,
        }


@dataclass(frozen=True, slots=True)
class ApprovalAction:
    """One approval action, or the reason none was taken (kind `none`)."""

    kind: Literal["approve", "dismiss", "none"]
    reason: str
    review_id: int | None = None  # the review to dismiss
    commit_id: str | None = None  # the commit an approval is for
    withheld: bool = False  # `none` because the review has gaps, though approve is on and nothing was found
    approved: bool = False  # the head stands approved by the app once this is carried out (or already was)

    def to_json(self) -> dict:
        return {"kind": self.kind, "reviewId": self.review_id, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Attempt:
    model: str
    error: str | None  # None: this model answered usably


@dataclass(frozen=True, slots=True)
class ReviewOutput:
    status: Literal["completed", "failed", "skipped"]
    head_sha: str
    model: str | None  # the model whose answer was used
    fallback_used: bool
    failure: str | None  # why the review failed, in words safe to post
    attempts: tuple[Attempt, ...]
    inline: tuple[InlineComment, ...]
    summary: str  # the summary comment's markdown, SUMMARY_MARKER first
    counts: Counts
    annotations: tuple[Annotation, ...]
    decisions: tuple[ApprovalAction, ...]
    conclusion: Literal["success", "failure", "neutral"]
    title: str  # one line for the check run
    notes: tuple[str, ...] = field(default=())  # what went unreviewed, template fallbacks, …
    kind: Literal["full", "incremental"] = "full"
    fingerprints: tuple[PostedFinding, ...] = ()  # of the findings this review posts, to remember
    # What this review posts, inline or in the summary, in the model's order: what a reader of the
    # pull request sees of it (`reviewer eval` scores these).
    findings: tuple[Finding, ...] = ()
    gaps: tuple[str, ...] = ()  # what the review could not see (bot.reviews.decisions.gaps): no approval

    def review_request(self) -> dict | None:
        """The "create a review" body carrying the inline comments, or None when there are none."""
        if not self.inline:
            return None
        return {
            "commit_id": self.head_sha,
            "event": "COMMENT",
            "body": f"Reviewer: {len(self.inline)} finding(s) inline; the summary comment has the overview.",
            "comments": [comment.to_json() for comment in self.inline],
        }

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "headSha": self.head_sha,
            "model": self.model,
            "fallbackUsed": self.fallback_used,
            "failure": self.failure,
            "attempts": [{"model": a.model, "error": a.error} for a in self.attempts],
            "inline": [c.to_json() for c in self.inline],
            "counts": self.counts.to_json(),
            "annotations": [a.to_json() for a in self.annotations],
            "decisions": [d.to_json() for d in self.decisions],
            "conclusion": self.conclusion,
            "title": self.title,
            "kind": self.kind,
            "notes": list(self.notes),
            "gaps": list(self.gaps),
        }
