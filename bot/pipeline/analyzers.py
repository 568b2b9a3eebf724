"""The analyzers' step of a review job (I/O): results for the head — uploaded from CI (the
`sarif_uploads` table, bot/store/uploads.py) and the built-in analyzers' (bot/analyzers/builtin) —
mapped to the admin file's severities, filtered to the diff, and fed to the head's ledger
(bot/analyzers/feed.py) with what the pull request has already (the review memory's
`review_findings`), so that a re-upload or a second run posts nothing new. Nothing is posted here:
the review job posts them with the model's, in one review (bot/pipeline/post.py).

A SARIF upload for a pull request whose review already ran makes a job of its own
(bot.events.routes.UPLOAD_EVENT, queued by bot/server/api/uploads.py under the pull request's key): it
posts the upload's new findings in at most one review — never one that a source posted before at
the same path, overlapping lines and rule id — and dismisses the app's approval if one on the diff
is blocking or important. Logs name tools and counts only: a result's message or code never
reaches them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from bot.analyzers.builtin import config_paths, run_builtins, secret_scan, wanted_files
from bot.analyzers.feed import entries
from bot.analyzers.filter import place
from bot.analyzers.model import AnalyzerResult
from bot.analyzers.secret_guard import flagged, guarded
from bot.analyzers.settings import AnalyzerSettings, analyzer_settings
from bot.analyzers.severity import mapped
from bot.analyzers.stored import result_from_json
from bot.config.admin import AdminConfig
from bot.events.jobs import Job, ReviewResult
from bot.github import GitHubClient, GitHubError, ReviewComment, create_review, list_reviews
from bot.learnings.review import leave_out_findings
from bot.pipeline.configure import plan_for
from bot.pipeline.followed import follow_posted
from bot.pipeline.gather import Gathered, gather, read_paths
from bot.pipeline.journal import marker
from bot.pipeline.post import carry_out, has_review, once
from bot.pipeline.services import Services
from bot.pipeline.targets import Target
from bot.reviews import decisions
from bot.reviews.diff import FilePatch, read_patches
from bot.reviews.ledger import Entry, Ledger, NoiseBudget, build
from bot.reviews.secret_lines import NO_SECRETS, SecretLines
from bot.reviews.voice import listing, upload_body

logger = logging.getLogger("reviewer.analyzers")


@dataclass(frozen=True)
class AnalyzerStep:
    """What the analyzers found at the head, as the ledger's entries, and the uploads they read."""

    entries: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = ()
    uploads: tuple[str, ...] = ()  # the ids of the uploads applied: `complete` once their findings are posted
    secrets: SecretLines = NO_SECRETS  # the lines the secret scanner flagged: no finding quotes them


def settings_for(admin: AdminConfig | None, full_name: str) -> AnalyzerSettings:
    """The admin file's analyzer settings for the repository (no admin file: the defaults)."""
    return analyzer_settings(admin, full_name) if admin is not None else AnalyzerSettings()


def patches_of(gathered: Gathered) -> dict[str, FilePatch]:
    return read_patches([{"filename": f.path, "status": f.status, "patch": f.patch,
                          "previous_filename": f.previous_path} for f in gathered.comparison.files])


async def _uploaded(services: Services, target: Target) -> tuple[list[AnalyzerResult], list[str]]:
    uploads = services.uploads
    if uploads is None:
        return [], []
    records = await uploads.for_head(target.full_name, target.head_sha)
    return [result_from_json(r) for record in records for r in record.results], [record.id for record in records]


async def _builtins(gh: GitHubClient, target: Target, settings: AnalyzerSettings,
                    patches: Mapping[str, FilePatch]) -> tuple[list[AnalyzerResult], list[str]]:
    """The built-in analyzers' results; the head's files are read only for the tools that need them."""
    if not settings.builtins:
        return [], []
    wanted, configs = wanted_files(settings, patches), config_paths(settings, patches)
    files = await read_paths(gh, target.owner, target.repo, wanted, target.head_sha) if wanted else {}
    config_files = await read_paths(gh, target.owner, target.repo, configs, target.head_sha) if configs else {}
    run = await run_builtins(settings, patches, {p: t.encode() for p, t in files.items()},
                             {p: t.encode() for p, t in config_files.items()})
    for tool in run.runs:
        logger.info("analyzer %s: %d result(s) on %d file(s) in %.2fs", tool.tool, len(tool.results), tool.files,
                    tool.seconds)
    return list(run.results), list(run.notes)


async def analyze(services: Services, gh: GitHubClient, target: Target, patches: Mapping[str, FilePatch],
                  plan_json: dict, *, builtins: bool = True) -> AnalyzerStep:
    """Run the analyzers on the head and say what stands there; nothing is posted."""
    settings = settings_for(services.admin.current, target.full_name)
    results, upload_ids = await _uploaded(services, target)
    notes: list[str] = []
    if builtins:
        found, notes = await _builtins(gh, target, settings, patches)
        results += found
    # before any learning leaves a result out: a line holding a secret is one whatever is posted
    secrets = flagged(results if builtins else await _secret_results(settings, patches))
    if services.learnings is not None and results:  # left out by a suppress learning of their rule id
        results, left_out = leave_out_findings(
            results, await services.learnings.learnings(account=target.owner, repository=target.repo),
            account=target.owner, repository=target.repo, finding_of=_as_learned)
        notes = [*notes, left_out] if left_out else notes
    results = mapped(results, settings.severity)
    memory = services.memory
    clean = secrets.blanked(patches)  # what is fingerprinted and kept of a finding leaves the flagged lines out
    placement = guarded(place(results, clean, mode=settings.filter, max_inline_per_tool=settings.max_inline_per_tool),
                        secrets)
    posted = await memory.posted(target.pull_key) if memory is not None and results else []
    fed = entries(placement, plan_json, posted, clean)
    logger.info("analyzers at %s: %d result(s), %d finding(s) stand, %d new", target.head_sha[:7], len(results),
                len(fed.entries), len(fed.new))
    return AnalyzerStep(fed.entries, (*notes, *fed.notes), tuple(upload_ids), secrets)


async def _secret_results(settings: AnalyzerSettings, patches: Mapping[str, FilePatch]) -> tuple[AnalyzerResult, ...]:
    """An upload's job runs no built-in analyzer, but still needs the lines holding a secret: an
    uploaded fix on one of them must not quote it."""
    return (await secret_scan(patches)).results if settings.secrets else ()


async def uploads_applied(services: Services, step_uploads: tuple[str, ...]) -> None:
    """The uploads a job read are `complete`: their findings are on the pull request, or were."""
    if step_uploads and services.uploads is not None:
        await services.uploads.set_status(list(step_uploads), "complete")


@dataclass(frozen=True)
class _Learned:
    """An analyzer's result as a learning reads it (bot/learnings/review.py): by its rule id."""

    path: str
    message: str
    rules: tuple[str, ...]
    category: str = "other"


def _as_learned(result: AnalyzerResult) -> _Learned:
    return _Learned(result.path or "", result.message, (result.rule_id,) if result.rule_id else ())


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


def noise_budget(services: Services, target: Target) -> NoiseBudget:
    """The admin file's `reviews.maxInlineComments` and `inlineSeverityFloor` for the repository."""
    admin = services.admin.current
    if admin is None:
        return NoiseBudget()
    limits = admin.review_limits(target.full_name)
    return NoiseBudget(limits.max_inline_comments, limits.inline_severity_floor)
