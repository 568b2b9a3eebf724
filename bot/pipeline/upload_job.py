"""A SARIF upload's own job (I/O): an upload for a pull request whose review already ran makes a
job of its own (bot.events.routes.UPLOAD_EVENT, queued by bot/server/api/uploads.py under the pull
request's key). It runs the analyzers' step on the uploads alone (bot/pipeline/analyzer_step.py)
and posts the upload's new findings in at most one review — never one that a source posted before
at the same path, overlapping lines and rule id — and dismisses the app's approval if one on the
diff is blocking or important. Logs name tools and counts only: a result's message or code never
reaches them.
"""

from __future__ import annotations

import logging

from bot.events.jobs import Job, ReviewResult
from bot.github import GitHubClient, GitHubError, ReviewComment, create_review, list_reviews
from bot.pipeline.analyzer_step import analyze, noise_budget, patches_of, uploads_applied
from bot.pipeline.configure import plan_for
from bot.pipeline.followed import follow_posted
from bot.pipeline.gather import gather
from bot.pipeline.journal import marker
from bot.pipeline.post import carry_out, has_review, once
from bot.pipeline.services import Services
from bot.pipeline.targets import Target
from bot.reviews import decisions
from bot.reviews.ledger import Ledger, build
from bot.reviews.voice import listing, upload_body

logger = logging.getLogger("reviewer.analyzers")


def upload_target(job: Job) -> Target | None:
    """The pull request an upload's job is for, from its payload (bot/server/api/uploads.py)."""
    upload = job.payload.get("upload") if isinstance(job.payload.get("upload"), dict) else None
    if job.repo is None or job.pr_number is None or upload is None or not isinstance(upload.get("commit_sha"), str):
        return None
    owner, _, repo = job.repo.partition("/")
    return Target(owner, repo, job.pr_number, upload["commit_sha"], "synchronize", None, attempt=job.attempt,
                  delivery_id=job.delivery_id)


async def apply_upload(services: Services, gh: GitHubClient, job: Job) -> ReviewResult | None:
    """An upload's job: its findings on the pull request, if its head is still the upload's
    commit and the configuration asks for a review; else it waits for a review of that head.
    Should the job fail, the upload says so (`failed`, GitHub's answer as the error); a
    redelivery that succeeds makes it `complete`."""
    target = upload_target(job)
    if target is None:
        return None
    try:
        return await _apply(services, gh, target)
    except GitHubError as exc:
        upload_id = str((job.payload.get("upload") or {}).get("id") or "")
        if services.uploads is not None and upload_id:
            await services.uploads.set_status([upload_id], "failed", [exc.describe()])
        raise


async def _apply(services: Services, gh: GitHubClient, target: Target) -> ReviewResult | None:
    if services.memory is not None and await services.memory.paused_by(target.pull_key) is not None:
        logger.info("upload for %s: the reviews of #%d are paused; kept for its next review", target.head_sha[:7],
                    target.number)
        return None
    gathered = await gather(gh, target)
    pull = gathered.pull
    if pull.get("state") != "open" or (pull.get("head") or {}).get("sha") != target.head_sha:
        logger.info("upload for %s: pull request #%d is closed or at another head; kept for 7 days",
                    target.head_sha[:7], target.number)
        return None
    plan, _ = plan_for(services.admin.current, gathered, target)
    plan_json = plan.to_json()
    if plan_json["decision"] != "review":
        return None
    step = await analyze(services, gh, target, patches_of(gathered), plan_json, builtins=False)
    ledger = build(target.head_sha, step.entries, noise_budget(services, target))
    if not ledger.posting:
        await uploads_applied(services, step.uploads)
        return None
    login = await services.app_login()
    await _post_upload(gh, target, ledger, login)
    if services.memory is not None:
        await services.memory.add_posted(target.pull_key, ledger.records())
    if services.learnings is not None:  # followed, and in the tally, as every posted finding
        await follow_posted(services.learnings, gh, target.owner, target.repo, target.number, target.pull_key,
                            ledger, bool(ledger.inline), login)
    reviews = await list_reviews(gh, target.owner, target.repo, target.number)
    decided = decisions.decide(completed=True, approve=False, head_sha=target.head_sha, app_login=login,
                               findings=[e.finding for e in ledger.deciding], reviews=reviews)
    for decision in decided:
        await carry_out(gh, target, decision, login)
    await uploads_applied(services, step.uploads)
    return ReviewResult("findings")


async def _post_upload(gh: GitHubClient, target: Target, ledger: Ledger, login: str) -> None:
    """The upload's one review, once (its marker names the delivery); should GitHub refuse a
    comment's place, the findings go in the review's body instead."""
    mark = marker(target.delivery_id, "upload") if target.delivery_id else ""
    comments = [ReviewComment(e.finding.path, e.finding.end_line, e.comment or e.finding.message,
                              start_line=e.finding.start_line if e.finding.start_line != e.finding.end_line else None)
                for e in ledger.inline]
    body = upload_body(ledger, mark)

    async def create(resend: bool) -> None:
        try:
            await create_review(gh, target.owner, target.repo, target.number, commit_id=target.head_sha,
                                event="COMMENT", body=body, comments=comments, resend_unanswered=resend)
        except GitHubError as exc:
            if exc.status != 422 or not comments:
                raise
            logger.warning("GitHub refused the upload's inline comments: %s", exc.message)
            moved = "\n".join(listing(ledger.inline))
            await create_review(gh, target.owner, target.repo, target.number, commit_id=target.head_sha,
                                event="COMMENT", body=f"{body}\n\nFindings GitHub did not place on the diff:\n{moved}",
                                resend_unanswered=resend)
    await once(create, lambda: has_review(gh, target, login, mark), retry=target.attempt > 1)
