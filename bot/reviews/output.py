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
from bot.reviews.ledger import EMPTY, Ledger
from bot.reviews.shaping import Counts
from bot.reviews.verdict import Verification

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
class ModelCost:
    """What one review asked of its models, as the providers counted it (bot/engine/usage.py)."""

    calls: int = 0
    prompt_tokens: int = 0
    answer_tokens: int = 0
    unreported: int = 0  # answers that gave no token counts
    money: float | None = None  # at the admin file's `price`s; None when a model called declares none
    unpriced: tuple[str, ...] = ()  # the models called that declare no price

    def to_json(self) -> dict:
        """`{calls, promptTokens, answerTokens, …}`: the `usage` of `reviewer review --format json`."""
        return {"calls": self.calls, "promptTokens": self.prompt_tokens, "answerTokens": self.answer_tokens,
                "unreported": self.unreported, "money": self.money, "unpriced": list(self.unpriced),
                "line": self.line()}

    def line(self) -> str:
        """"2 model calls: 1,234 prompt and 456 answer tokens; 0.0042 at the declared prices"."""
        if not self.calls:
            return "no model call"
        out = (f"{self.calls} model call{'s' if self.calls != 1 else ''}: {self.prompt_tokens:,} prompt and "
               f"{self.answer_tokens:,} answer tokens")
        if self.unreported:
            out += f" ({self.unreported} answer(s) gave no token counts)"
        if self.money is not None:
            out += f"; {self.money:.4f} at the declared prices"
        elif self.unpriced:
            out += f"; no price declared for {', '.join(self.unpriced)}"
        return out


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A changed file the review did not read whole, and why (ignored, too large, the budget)."""

    path: str
    why: str


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
    gaps: tuple[str, ...] = ()  # what the review could not see (bot.reviews.decisions.gaps): no approval
    ledger: Ledger = EMPTY  # every finding that stands at the head, each once (bot/reviews/ledger.py)
    review_body: str = ""  # the body of the one review carrying the inline comments of every source
    cost: ModelCost | None = None  # None: no model was asked
    left_out: tuple[LeftOut, ...] = ()  # changed files the review did not read whole
    resolve: tuple[int, ...] = ()  # the app's inline comments whose threads it closes: their findings are resolved
    verification: Verification | None = None  # verify: true: how the second look at the findings went

    @property
    def findings(self) -> tuple[Finding, ...]:
        """What this review posts, inline or in the summary, every source in order: what a reader
        of the pull request sees of it (`reviewer eval` scores these)."""
        return tuple(e.finding for e in self.ledger.posting)

    @property
    def fingerprints(self) -> tuple[PostedFinding, ...]:
        """The review memory's rows of what it posts, to remember."""
        return self.ledger.records()

    def review_request(self) -> dict | None:
        """The "create a review" body carrying the inline comments, or None when there are none."""
        if not self.inline:
            return None
        return {
            "commit_id": self.head_sha,
            "event": "COMMENT",
            "body": self.review_body or f"Reviewer: {len(self.inline)} finding(s) inline.",
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
            "standing": self.ledger.standing().to_json(),
            "cost": None if self.cost is None else self.cost.to_json(),
            "leftOut": [asdict(item) for item in self.left_out],
            "verification": None if self.verification is None else self.verification.to_json(),
        }

