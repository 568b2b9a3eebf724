"""Approve, dismiss, and the check run's conclusion: pure functions of a finished review.

What counts is every finding the review made that the configured feedback keeps, posted or not:
a blocking finding withheld by `requireSuggestedFix` (no fix to offer) is still a blocking problem,
so it still stops an approval and still fails the check run, whose title says it was withheld.
Only the app's own reviews are ever dismissed; a review that did not complete changes nothing.
A review that completed with a gap — a finding of the model's dropped as malformed, findings past
the limit, part of the diff never sent — is not approved: what it did not see may be blocking. Its
findings still dismiss an earlier approval as any review's do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from bot.reviews.findings import Finding
from bot.reviews.output import Annotation, ApprovalAction
from bot.reviews.shaping import RuleRef

_LEVELS = {"blocking": "failure", "important": "warning", "minor": "notice", "nit": "notice"}
MAX_ANNOTATION_MESSAGE = 60_000  # GitHub: 64 KB
MAX_TITLE = 255


def _is_own(review: Mapping, app_login: str) -> bool:
    user = review.get("user") or {}
    login = str(user.get("login", "")).lower()
    own = app_login.lower()
    return user.get("type") == "Bot" and login in (own, own.removesuffix("[bot]") + "[bot]")


def _tally(findings: Iterable[Finding]) -> tuple[int, int]:
    severities = [f.severity for f in findings]
    return severities.count("blocking"), severities.count("important")


def decide(
    *,
    completed: bool,
    approve: bool,
    head_sha: str,
    app_login: str,
    findings: Sequence[Finding],
    reviews: Iterable[Mapping],
    gaps: Sequence[str] = (),
) -> tuple[ApprovalAction, ...]:
    """What to do about approvals after one review of `head_sha`.

    `reviews` are the pull request's reviews as GitHub lists them. Dismissal does not depend on
    `approve`: an approval the app gave earlier must not stand once the app finds a problem, even
    if approving has since been turned off. `gaps`: what the review could not see (`gaps()`), in
    words; any withholds the approval, and the decision says why.
    """
    short = head_sha[:7]
    if not completed:
        return (ApprovalAction("none", f"the review of {short} did not complete; nothing approved or dismissed"),)
    blocking, important = _tally(findings)
    own_approvals = [r for r in reviews if r.get("state") == "APPROVED" and _is_own(r, app_login)]
    if blocking or important:
        reason = (f"Reviewer found {blocking} blocking and {important} important finding(s) "
                  f"at {short}; its earlier approval no longer holds.")
        dismissals = tuple(ApprovalAction("dismiss", reason, review_id=r.get("id")) for r in own_approvals)
        if dismissals:
            return dismissals
        return (ApprovalAction("none", f"not approved: {blocking} blocking, {important} important finding(s)"),)
    if not approve:
        return (ApprovalAction("none", "approve is off"),)
    if gaps:
        return (ApprovalAction("none", "approval withheld: " + "; ".join(gaps), withheld=True),)
    if any(r.get("commit_id") == head_sha for r in own_approvals):
        return (ApprovalAction("none", f"already approved at {short}", approved=True),)
    return (ApprovalAction("approve", f"Reviewer found nothing blocking or important at {short}.",
                     commit_id=head_sha, approved=True),)


def _many(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def gaps(*, malformed: int, over_limit: int, unreviewed: Sequence[str], max_findings: int) -> tuple[str, ...]:
    """What a completed review could not see, each in words for the check run (empty: nothing)."""
    out = []
    if malformed:
        out.append(f"{_many(malformed, 'finding', 'findings')} of the model's answer "
                   f"{'was' if malformed == 1 else 'were'} malformed and dropped (what "
                   f"{'it' if malformed == 1 else 'they'} said is unknown)")
    if over_limit:
        out.append(f"{_many(over_limit, 'finding', 'findings')} past the limit of {max_findings} "
                   f"{'was' if over_limit == 1 else 'were'} not read")
    if unreviewed:
        shown = ", ".join(unreviewed[:5]) + (f" and {len(unreviewed) - 5} more" if len(unreviewed) > 5 else "")
        out.append(f"part of the diff was not sent to the model, for its size: {shown}")
    return tuple(out)


def conclusion(
    status: str, findings: Sequence[Finding], withheld: Sequence[Finding], failure: str | None
) -> tuple[str, str]:
    """The review's part of the check run: (conclusion, title)."""
    if status == "skipped":
        return "neutral", "Review skipped"
    if status != "completed":
        return "failure", f"Review failed: {failure or 'no model answered'}"[:MAX_TITLE]
    blocking, important = _tally([*findings, *withheld])
    held, _ = _tally(withheld)
    note = f" ({held} withheld: no suggested fix)" if held else ""
    if blocking:
        return "failure", f"{blocking} blocking finding(s){note}"
    if important:
        return "success", f"{important} important finding(s), nothing blocking"
    return "success", "Nothing blocking or important" if findings else "No findings"


class Annotated(Protocol):
    """A finding with the rules it names and its words as plain text (the ledger's `Entry`)."""

    @property
    def finding(self) -> Finding: ...

    @property
    def text(self) -> str: ...

    @property
    def rules(self) -> tuple[RuleRef, ...]: ...


def check_run_annotations(posted: Iterable[Annotated]) -> tuple[Annotation, ...]:
    """One check-run annotation per finding: blocking → failure, important → warning."""
    out = []
    for placed in posted:
        f = placed.finding
        rules = "".join(f" [{r.id}]" for r in placed.rules)
        message = placed.text + "".join(f"\nRule {r.id}: {r.text}" for r in placed.rules)
        out.append(Annotation(
            path=f.path,
            start_line=f.start_line,
            end_line=f.end_line,
            annotation_level=_LEVELS[f.severity],  # type: ignore[arg-type]
            message=message[:MAX_ANNOTATION_MESSAGE],
            title=f"{f.severity} · {f.category}{rules}"[:MAX_TITLE],
        ))
    return tuple(out)
