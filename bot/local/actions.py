"""`reviewer review --post` in a GitHub Actions job (I/O: git, the models, GitHub): the pull request
of the job's `pull_request` event reviewed in the checked-out repository, and posted as the App
posts it — the `Reviewer` check run, one review with the inline comments of every source, the
summary comment, the approval decision — with the workflow's token and the App's own posting code
(bot/pipeline/post.py).

There is no database: what was posted before is read back from the pull request
(bot/local/history.py, bot/reviews/markers.py), and what this review posts carries its markers.
The pull request's life follows the App's decisions (bot/reviews/life.py): the same head with the
same plan is not reviewed again, a push is reviewed for what changed since the last reviewed head
(the increment read from git), and a finding is never posted twice.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, replace

import aiohttp

from bot.config.admin import AdminConfig
from bot.engine.usage import Usage
from bot.github import (
    Annotation,
    CheckOutput,
    GitHubApp,
    GitHubClient,
    GitHubError,
    complete_check_run,
    list_check_runs,
    list_reviews,
    start_check_run,
)
from bot.index.gitdiff import diff_entries
from bot.local.actions_event import ActionsEvent
from bot.local.change import Change, Refs, read_change
from bot.local.history import History, read_history
from bot.local.indexes import Indexes
from bot.local.report import Reported as Shown
from bot.local.report import deciding_of, findings_of
from bot.local.review import Reviewed, review_change
from bot.pipeline.life import Step, describe, repeated
from bot.pipeline.post import post_output
from bot.pipeline.targets import Target
from bot.plan import git
from bot.reviews.checkrun import CheckRunReport, report_for_failure, report_for_plan, with_review
from bot.reviews.life import Next, next_review, plan_digest
from bot.reviews.markers import PullState, finding_marker, state_marker, without_markers
from bot.reviews.output import ReviewOutput
from bot.reviews.scope import ReviewScope
from bot.store.model import ReviewedHead

STARTED = "Reading the configuration at the merge base and planning the review."


@dataclass(frozen=True)
class Posted:
    """What `--post` came to: the check run's report, the findings that stand at the head (what
    this job posted, or the last review's when the head was reviewed already), and the severities
    that decide (`--fail-on` reads them)."""

    report: CheckRunReport
    status: str  # completed | repeated | failed | skipped | analyzers-only
    findings: tuple[Shown, ...] = ()
    deciding: tuple[str, ...] = ()
    reason: str | None = None
    usage: Usage | None = None


def _target(event: ActionsEvent) -> Target:
    return Target(event.owner, event.repo, event.number, event.head_sha, event.action, dict(event.pull),
                  delivery_id=f"actions-{event.run}" if event.run else "")


async def _started(gh: GitHubClient, target: Target) -> tuple[int, str]:
    """The `Reviewer` run started on the head; the login this token posts as (`<app>[bot]`), read
    from the run GitHub made: GITHUB_TOKEN is the GitHub Actions app's, another app's token its own."""
    external = target.delivery_id or f"actions-{uuid.uuid4().hex}"
    run_id = await start_check_run(gh, target.owner, target.repo, target.head_sha, title="Reviewing", summary=STARTED,
                                   external_id=external)
    ours = [r for r in await list_check_runs(gh, target.owner, target.repo, target.head_sha) if r.get("id") == run_id]
    slug = (ours[0].get("app") or {}).get("slug") if ours else None
    return run_id, f"{slug or 'github-actions'}[bot]"


def _last(state: PullState | None) -> ReviewedHead | None:
    """The last review as bot.reviews.life reads it, from the summary comment's state."""
    if state is None:
        return None
    report = {"conclusion": state.conclusion, "title": state.title, "text": "", "annotations": [],
              "summary": "Its findings are in the review comments and the summary comment of the pull request."}
    return ReviewedHead(state.head_sha, state.plan_digest, report, state.merge_base)


def _increment(repo: str, since: str, head: str) -> tuple[dict, ...] | None:
    """The files changed since the last reviewed head, when that head is an ancestor of this one in
    the checkout (else a force-push dropped it: a full review)."""
    try:
        git.git(repo, "merge-base", "--is-ancestor", since, head)
    except git.GitError:
        return None
    return tuple(diff_entries(repo, since, head))


def _step(change: Change, history: History) -> Step:
    """The review this event gets (bot.pipeline.life.Step, as the App decides it from its memory)."""
    last, digest = _last(history.state), plan_digest(change.plan)
    chosen = next_review(last, change.head_sha, digest, merge_base=change.merge_base)
    if chosen.action == "incremental" and chosen.since:
        increment = _increment(change.repo, chosen.since, change.head_sha)
        if increment is not None:
            scope = ReviewScope("incremental", chosen.since, increment, history.posted)
            return Step(chosen, digest, scope, last, change.merge_base)
        chosen = Next("full", reason="the last reviewed head is no longer in the branch (a force-push)")
    return Step(chosen, digest, ReviewScope("full", posted=history.posted), last, change.merge_base)


def _output(report: CheckRunReport) -> CheckOutput:
    annotations = tuple(Annotation(a["path"], a["start_line"], a["end_line"], a["annotation_level"], a["message"],
                                   a.get("title")) for a in report.annotations)
    return CheckOutput(report.title, report.summary, report.text or None, annotations)


def marked(output: ReviewOutput, state: PullState) -> ReviewOutput:
    """The output with each inline comment carrying its finding's marker (the comments are the
    ledger's inline entries, in order) and the summary carrying the pull request's new state,
    which adds the findings this review posts in the summary only."""
    head = output.head_sha
    inline = tuple(replace(c, body=f"{c.body}\n\n{finding_marker(e.record(head))}")
                   for c, e in zip(output.inline, output.ledger.inline, strict=True))
    summary_only = tuple(e.record(head) for e in output.ledger.posting if not e.inline)
    state = replace(state, summary_only=(*state.summary_only, *summary_only))
    return replace(output, inline=inline, summary=f"{output.summary}\n\n{state_marker(state)}")


async def post_review(event: ActionsEvent, repo: str, admin: AdminConfig | None,
                      secrets_dir: str | None) -> tuple[Posted, Change]:
    """Review the event's pull request and post the result; what was posted, and the change
    reviewed. Raises git.GitError, before anything is posted, when the checkout lacks the event's
    commits; any other failure completes the run as failed (saying why) and is raised."""
    change = await asyncio.to_thread(read_change, repo, Refs(event.base_sha, event.head_sha), admin,
                                     Indexes.in_cache(), full_name=event.full_name, pull=event.pull,
                                     event=event.action)
    target = _target(event)
    async with aiohttp.ClientSession() as session:
        gh = GitHubApp.with_token(session, event.token, base_url=event.api_url)
        run_id, login = await _started(gh, target)
        try:
            posted = await _review_and_post(gh, session, target, change, admin, secrets_dir, login)
        except Exception as exc:  # the run never stays in progress
            reason = exc.describe() if isinstance(exc, GitHubError) else f"{type(exc).__name__}: {exc}"
            failed = report_for_failure("reviewing and posting", reason)
            await complete_check_run(gh, target.owner, target.repo, run_id, failed.conclusion, _output(failed))
            raise
        await complete_check_run(gh, target.owner, target.repo, run_id, posted.report.conclusion,
                                 _output(posted.report))
    return posted, change


async def _review_and_post(gh: GitHubClient, session: aiohttp.ClientSession, target: Target, change: Change,
                           admin: AdminConfig | None, secrets_dir: str | None, login: str) -> Posted:
    plan = change.plan
    planned = report_for_plan(plan, change.notes)
    if plan["decision"] != "review":
        return Posted(planned, "skipped", reason=f"the plan skips it ({plan['skipReason']})")
    history = await read_history(gh, target.owner, target.repo, target.number, login)
    step = _step(change, history)
    if step.next.action == "repeat" and step.last is not None and history.state is not None:
        report, _ = repeated(step.last, step.next.reason)
        return Posted(report, "repeated", deciding=history.state.deciding, reason=step.next.reason)
    usage = Usage()
    reviews = await list_reviews(gh, target.owner, target.repo, target.number)
    reviewed = await review_change(change, admin, session, usage, secrets_dir, scope=step.scope, reviews=reviews,
                                   app_login=login, posted=history.posted)
    output = reviewed.output
    if output is None or (reviewed.skipped is not None and not reviewed.analyzed):
        notes = [n for n in (reviewed.skipped, *reviewed.notes) if n]
        return Posted(report_for_plan(plan, [*change.notes, *notes]), "analyzers-only", reason=reviewed.skipped,
                      usage=usage)
    return await _post(gh, target, change, step, reviewed, output, planned, history, login, usage)


async def _post(gh: GitHubClient, target: Target, change: Change, step: Step, reviewed: Reviewed,
                output: ReviewOutput, planned: CheckRunReport, history: History, login: str, usage: Usage) -> Posted:
    """The App's posting (bot/pipeline/post.py) of an output marked for the next job to read back."""
    prior = history.state.summary_only if history.state is not None else ()
    state = PullState(target.head_sha, step.digest, change.merge_base, output.conclusion, output.title, prior,
                      deciding_of(output.ledger))
    output = marked(output, state)
    posted = await post_output(gh, target, output, login)
    carried = {**output.to_json(), "decisions": posted.decisions} if posted.decisions else output.to_json()
    said = (describe(step, target.head_sha),) if output.model is not None else ()
    final = with_review(planned, carried, without_markers(output.summary),
                        [*said, *output.notes, *posted.notes])
    status = "failed" if output.status == "failed" else "analyzers-only" if reviewed.skipped else "completed"
    return Posted(final, status, tuple(findings_of(output.ledger)), deciding_of(output.ledger),
                  output.failure or reviewed.skipped, usage)
