"""The pipeline's side of a pull request's life (I/O): read what the memory holds, confirm an
incremental review with GitHub, and remember what a review did.

The decisions themselves are `bot.reviews.life`'s pure functions; this module feeds them and
carries them out.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.events.jobs import REVIEW_RESULTS, ReviewResult
from bot.github import GitHubClient, changes_between
from bot.pipeline.targets import Target
from bot.reviews.checkrun import CheckRunReport
from bot.reviews.life import Next, next_review, plan_digest
from bot.reviews.memory import ReviewMemory
from bot.reviews.output import ReviewOutput
from bot.reviews.scope import ReviewScope
from bot.store.model import ReviewedHead

logger = logging.getLogger("reviewer.pipeline")


@dataclass(frozen=True)
class Step:
    """The review one event gets: repeat the last one (`next.action == "repeat"`), or the scope
    to review with."""

    next: Next
    digest: str
    scope: ReviewScope
    last: ReviewedHead | None
    merge_base: str


async def step_for(memory: ReviewMemory, gh: GitHubClient, target: Target, plan: Mapping[str, Any],
                   merge_base: str, incremental: bool) -> Step:
    digest = plan_digest(plan)
    last = await memory.last_review(target.pull_key)
    chosen = next_review(last, target.head_sha, digest, merge_base=merge_base, force=target.force,
                         incremental=incremental)
    posted = tuple(await memory.posted(target.pull_key))
    if chosen.action == "incremental" and chosen.since:
        increment = await changes_between(gh, target.owner, target.repo, chosen.since, target.head_sha)
        if increment is not None and increment.status == "ahead" and increment.complete:
            return Step(chosen, digest, ReviewScope("incremental", chosen.since, increment.files, posted), last,
                        merge_base)
        why = ("the last reviewed head is no longer in the branch (a force-push)"
               if increment is None or increment.status != "ahead" else "the changes are too many to list")
        logger.info("full review of %s: %s", target.head_sha[:7], why)
        chosen = Next("full", reason=why)
    return Step(chosen, digest, ReviewScope("full", posted=posted), last, merge_base)


def repeated(last: ReviewedHead, reason: str) -> tuple[CheckRunReport, ReviewResult]:
    """The check run of an event that cannot change the review: the review's own, said again, and
    what it came to (a review remembered before results were, as `findings`)."""
    report = last.report
    note = (f"Already reviewed: {reason}, so the model was not asked again and nothing new was posted. "
            "This is that review's result.")
    outcome = report.get("outcome")
    result = ReviewResult(outcome if outcome in REVIEW_RESULTS else "findings", "already-reviewed")
    return (CheckRunReport(report["conclusion"], report["title"], f"{note}\n\n{report['summary']}",
                           report.get("text", ""), list(report.get("annotations", []))), result)


async def remember(memory: ReviewMemory, target: Target, digest: str, merge_base: str, outcome: ReviewOutput,
                   report: CheckRunReport, result: ReviewResult) -> None:
    """A completed review is the one later events of this head repeat, and the base of the next
    incremental review (`digest` and `merge_base`: its step's)."""
    if outcome.status != "completed":
        return
    saved = {"conclusion": report.conclusion, "title": report.title, "summary": report.summary,
             "text": report.text, "annotations": report.annotations, "outcome": result.kind}
    await memory.record_review(target.pull_key, ReviewedHead(target.head_sha, digest, saved, merge_base))


def paused_report(paused_by: str, slug: str) -> CheckRunReport:
    """Automatic reviews are paused: the run says so, and how to go on."""
    return CheckRunReport("neutral", "Skipped: automatic reviews of this pull request are paused",
                          f"{paused_by} paused automatic reviews of this pull request. Comment "
                          f"`@{slug} resume` to resume them, or `@{slug} review` to review it once now.\n")


def describe(step: Step, head_sha: str) -> str:
    """One line for the check run: which kind of review ran, over which commits, and why."""
    if step.scope.kind == "incremental" and step.scope.since:
        return (f"Incremental review: the changes {step.scope.since[:7]}..{head_sha[:7]} "
                f"({step.next.reason}); findings already posted are not posted again.")
    return (f"Full review of {head_sha[:7]} ({step.next.reason}); findings already posted are not "
            "posted again.")
