"""One pull request, end to end: the `Reviewer` check run from in_progress to completed.

The run is started before anything else can fail and always completed: with the plan's or the
review's conclusion, or with a readable error when GitHub or the models failed after retries. A
store that went away (StoreUnavailable) is no failure of the review: the run stays in progress and
the job's next attempt, once the store is back, takes it up and carries on (bot.pipeline.journal).
What the review came to (bot.events.jobs.ReviewResult) is returned for the queue to record beside the
job's state: a job that ran to its end may hold a review that failed.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from bot import telemetry
from bot.config.budgets import BudgetLimits
from bot.config.model import EffectiveConfig, IndexLimits
from bot.engine.engine import analyzers_review, run_review
from bot.engine.request import DEFAULT_BUDGETS
from bot.engine.usage import Usage
from bot.events.jobs import ReviewResult
from bot.github import (
    Annotation,
    CheckOutput,
    GitHubClient,
    GitHubError,
    complete_check_run,
    list_check_runs,
    list_reviews,
    start_check_run,
)
from bot.learnings.posting import with_tally
from bot.learnings.threads import to_close
from bot.pipeline import budgets, journal, learn
from bot.pipeline.analyzer_step import AnalyzerStep, analyze, noise_budget, patches_of, uploads_applied
from bot.pipeline.configure import plan_for, referenced_paths
from bot.pipeline.followed import follow_posted, pull_tally
from bot.pipeline.gather import Gathered, gather, read_paths
from bot.pipeline.index import IndexContext, review_context
from bot.pipeline.intent import read_intent
from bot.pipeline.life import Step, describe, paused_report, remember, repeated, step_for
from bot.pipeline.outcome_events import follow_to_head
from bot.pipeline.post import post_output
from bot.pipeline.services import Services
from bot.pipeline.targets import Target
from bot.pipeline.threads import close_threads
from bot.reviews.checkrun import CheckRunReport, report_for_failure, report_for_plan, with_review
from bot.reviews.checkrun_budget import report_for_budget
from bot.reviews.diff import read_patches
from bot.reviews.output import ReviewOutput
from bot.reviews.scope import FULL, ReviewScope
from bot.store.model import StoreError, StoreUnavailable

logger = logging.getLogger("reviewer.pipeline")

NO_PROVIDER = ("No model provider is configured for this repository: the plan is posted, and no model "
               "review ran. An administrator declares providers in the admin file (see the README).")
NO_MODEL = ("No model is chosen for this repository (models.review and models.fallback are unset): the plan "
            "is posted, and no model review ran. Set models.review in .reviewer.yaml, or in the admin file's "
            "defaults or account.")
NO_MODEL_WHY = "no model provider or no model is configured: the check run says which"


class _Stage:
    """Names what the job was doing, so a failure says where it stopped."""

    def __init__(self) -> None:
        self.name = "starting"


def _own_run(target: Target, ours: list[dict]) -> dict | None:
    """On an attempt after the first, the run an earlier attempt of the same delivery made, found
    by its external id whatever its status (another delivery's run on the same head, such as
    another pull request's, is never taken); without a delivery id, any run still in progress."""
    if target.attempt <= 1:
        return None
    for run in ours:
        if target.delivery_id and run.get("external_id") == target.delivery_id:
            return run
        if not target.delivery_id and run.get("status") != "completed":
            return run
    return None


async def _start_run(gh: GitHubClient, target: Target) -> int:
    return await start_check_run(gh, target.owner, target.repo, target.head_sha, title="Reviewing",
                                 summary="Reading the configuration at the merge base and planning the review.",
                                 external_id=target.delivery_id or None)


async def review_pull_request(services: Services, gh: GitHubClient, target: Target) -> ReviewResult | None:
    """Decide, record the decision (bot.pipeline.journal), post it, complete the run: each attempt
    of a delivery's job carries on from where an earlier one stopped, and posts nothing twice.
    What the review came to, or None when no run was made (a check suite for a head that already
    has one)."""
    # Our runs on the head, asked once, and only where they matter (not on a plain first attempt).
    wanted = target.only_if_new or target.attempt > 1
    ours = await list_check_runs(gh, target.owner, target.repo, target.head_sha) if wanted else []
    own = _own_run(target, ours)
    if target.only_if_new and any(run is not own for run in ours):
        logger.info("check suite requested for %s, which already has a Reviewer run", target.head_sha[:7])
        return None
    record = await journal.recorded(services.memory, target.delivery_id, target.attempt)
    planned = journal.from_record(record) if record is not None else None
    if own is not None and own.get("status") == "completed":
        if planned is not None:  # an earlier attempt posted everything and completed the run
            logger.info("an earlier attempt of this delivery completed its run %s: taken up", own["id"])
            if planned.error is not None:
                raise journal.RecordedFailure(planned.error)
            return planned.result
        own = None  # a redelivered delivery's earlier job: its run stays as it ended
    run_id = int(own["id"]) if own is not None else await _start_run(gh, target)
    if planned is not None and planned.error is not None:  # an earlier attempt failed, its run not completed
        await complete_check_run(gh, target.owner, target.repo, run_id, planned.report.conclusion,
                                 _output(planned.report))
        raise journal.RecordedFailure(planned.error)
    stage = _Stage()
    try:
        if planned is None:
            planned = await _decide(services, gh, target, stage)
            await journal.record(services.memory, target.delivery_id, journal.to_record(planned))
        report, result = await _carry_out(services, gh, target, planned, stage)
    except StoreUnavailable:
        raise  # not the review's failure: the run stays in progress for the job's next attempt
    except Exception as exc:
        reason = _failure_text(exc)
        failed = report_for_failure(stage.name, reason)
        await journal.record(services.memory, target.delivery_id, journal.to_record(journal.Planned(failed, error=reason)))
        await complete_check_run(gh, target.owner, target.repo, run_id, failed.conclusion, _output(failed))
        raise
    await complete_check_run(gh, target.owner, target.repo, run_id, report.conclusion, _output(report))
    return result


def plan_result(plan_json: dict) -> ReviewResult:
    """A plan that asks for no review: an invalid configuration is a failed review (fixed, it is
    run again by a redelivery), any other skip reason a skipped one."""
    reason = plan_json.get("skipReason") or "skipped"
    return ReviewResult("failed" if reason == "invalid-config" else "skipped", reason)


def review_result(output: ReviewOutput, carried: list[dict]) -> ReviewResult:
    """What a model review came to; `carried` is what the poster did of its decisions, in order
    (`refused` set where GitHub said no)."""
    if output.status == "failed":
        return ReviewResult("failed", "no-usable-answer")
    if output.status == "skipped":
        return ReviewResult("skipped", "skipped")
    refused = {i for i, done in enumerate(carried) if done.get("refused")}
    if any(d.approved and i not in refused for i, d in enumerate(output.decisions)):
        return ReviewResult("approved")
    return ReviewResult("findings", "incomplete" if output.gaps else None)


def _failure_text(exc: Exception) -> str:
    if isinstance(exc, GitHubError):
        return exc.describe()
    return f"{type(exc).__name__}: {exc}"


def _output(report: CheckRunReport) -> CheckOutput:
    """The report's annotations are GitHub's JSON shape; the client takes its own dataclass."""
    annotations = tuple(Annotation(a["path"], a["start_line"], a["end_line"], a["annotation_level"], a["message"],
                                   a.get("title")) for a in report.annotations)
    return CheckOutput(report.title, report.summary, report.text or None, annotations)


async def _carry_out(services: Services, gh: GitHubClient, target: Target, planned: journal.Planned,
                     stage: _Stage) -> tuple[CheckRunReport, ReviewResult | None]:
    """Post what was decided (taking up what an earlier attempt posted); the run's final report
    and what the review came to."""
    output = planned.output
    if output is None:
        await uploads_applied(services, planned.uploads)
        return planned.report, planned.result
    stage.name = "posting the review"
    memory, login = services.memory, await services.app_login()
    await close_threads(services.learnings, gh, target, output.resolve, login)
    if services.learnings is not None:  # the summary ends with what became of the findings so far
        output = with_tally(output, await pull_tally(services.learnings, target.pull_key, output.fingerprints,
                                                     login))

    async def posted_inline() -> None:
        if memory is not None:
            await memory.add_posted(target.pull_key, output.fingerprints)
        if services.learnings is not None:  # what becomes of each finding, from now on (bot/pipeline/followed.py)
            await follow_posted(services.learnings, gh, target.owner, target.repo, target.number, target.pull_key,
                                output.ledger, bool(output.inline), login)

    with telemetry.span("post", inline=len(output.inline)):
        posted = await post_output(gh, target, output, login, on_posted=posted_inline)
    await uploads_applied(services, planned.uploads)
    carried_out = {**output.to_json(), "decisions": posted.decisions} if posted.decisions else output.to_json()
    final = with_review(planned.report, carried_out, output.summary, [*planned.notes, *output.notes, *posted.notes])
    result = review_result(output, posted.decisions)
    if memory is not None and planned.remember is not None:
        await remember(memory, target, planned.remember.digest, planned.remember.merge_base, output, final, result)
    return final, result


async def _decide(services: Services, gh: GitHubClient, target: Target, stage: _Stage) -> journal.Planned:
    """What this job will post, read and reviewed but not posted: GitHub is only read here (the
    check run aside, started in progress before), and every post, the analyzers' review when no
    model reviews included, is `_carry_out`'s, after the journal has recorded what this returns.
    Our own stores are written: the index is dropped when the repository turned reviews off, what
    became of earlier findings and the learnings from 👎 are kept, and the account's budget is
    counted and settled. The steps: the plan; what became of earlier findings; the analyzers;
    then the model, unless none is configured, the head was reviewed already, or the account's
    budget is spent."""
    if services.memory is not None and not target.force:
        paused = await services.memory.paused_by(target.pull_key)
        if paused is not None:
            return journal.Planned(paused_report(paused, (await services.app_login()).removesuffix("[bot]")),
                                   result=ReviewResult("skipped", "paused"))
    stage.name = "reading the pull request from GitHub"
    gathered = await gather(gh, target)
    stage.name = "planning"
    with telemetry.span("plan") as span:
        plan, config = plan_for(services.admin.current, gathered, target)
        plan_json = plan.to_json()
        span.set(decision=plan_json["decision"], files=len(plan_json.get("files", [])))
    if not config.enabled and services.indexes is not None:  # enabled: false stops indexing too
        await services.indexes.delete(target.full_name)
    if plan_json["decision"] != "review":
        return journal.Planned(report_for_plan(plan_json), result=plan_result(plan_json))
    if services.learnings is not None:  # what became of earlier findings: pushes, 👎 (bot/pipeline/learn.py)
        stage.name = "following earlier findings"
        await follow_to_head(services.learnings, gh, target.owner, target.repo, target.pull_key, target.head_sha,
                             diff=_diff_of(gathered))
        await learn.read_reactions_logged(services.learnings, services.access,
                                          _place(services, gh, target, await services.app_login()))
    stage.name = "running the analyzers"
    analyzed = await analyze(services, gh, target, patches_of(gathered), plan_json)
    planned = await _reviewed(services, gh, target, gathered, plan_json, config, stage, analyzed)
    if planned.output is None:
        return replace(planned, uploads=analyzed.uploads)
    resolve = await _threads_to_close(services, target, planned.output)
    return replace(planned, output=replace(planned.output, resolve=resolve), uploads=analyzed.uploads)


async def _reviewed(services: Services, gh: GitHubClient, target: Target, gathered: Gathered, plan_json: dict,
                    config: EffectiveConfig, stage: _Stage, analyzed: AnalyzerStep) -> journal.Planned:
    """The review itself: the model's and the analyzers' findings together, or the analyzers' alone
    when no model reviews (none configured, or a budget spent), or the last review said again."""
    unreviewed = None if config.providers and any(plan_json["models"].values()) else \
        (NO_PROVIDER, "no-provider") if not config.providers else (NO_MODEL, "no-model")
    if unreviewed is not None:  # no model reviews: the analyzers' findings, if any, are the review
        if not analyzed.entries:
            return journal.Planned(report_for_plan(plan_json, [unreviewed[0], *analyzed.notes]),
                                   result=ReviewResult("skipped", unreviewed[1]))
        output = await _analyzers_alone(services, gh, target, plan_json, analyzed, why=NO_MODEL_WHY)
        return journal.Planned(report_for_plan(plan_json, [unreviewed[0]]), output)
    step = None
    if services.memory is not None and services.incremental:
        stage.name = "reading what earlier reviews of this pull request did"
        step = await step_for(services.memory, gh, target, plan_json, gathered.merge_base, services.incremental)
        if step.next.action == "repeat" and step.last is not None:
            report, result = repeated(step.last, step.next.reason)
            return journal.Planned(report, result=result)
    stage.name = "counting the account's budgets"
    over = await _over_budget(services, target)
    if isinstance(over, budgets.Exceeded):  # no model; the analyzers' findings, if any, are still the review
        spent = _budget_report(plan_json, over)  # its title and summary name the budget, and its reset
        if not analyzed.entries:
            return journal.Planned(spent, result=ReviewResult("skipped", over.reason))
        output = await _analyzers_alone(services, gh, target, plan_json, analyzed, held_by_budget=True,
                                        why=f"the account's budget `{over.budget}` is spent: see the plan below")
        return journal.Planned(spent, replace(output, title=f"{spent.title}; {output.title}"), notes=analyzed.notes)
    stage.name = "running the model review"
    usage = Usage()
    try:
        output = await _model_review(services, gh, target, gathered, plan_json, config, stage, step, analyzed, usage)
    finally:  # what the model calls spent, in place of the tokens held for them (also when they failed)
        if services.budgets is not None:
            await budgets.settle(services.budgets, over, budgets.account_of(target.full_name), usage)
    return journal.Planned(report_for_plan(plan_json), output,
                           notes=((describe(step, target.head_sha),) if step is not None else ()) + analyzed.notes,
                           remember=journal.Remembered(step.digest, step.merge_base) if step is not None else None)


async def _analyzers_alone(services: Services, gh: GitHubClient, target: Target, plan_json: dict,
                           analyzed: AnalyzerStep, *, why: str, held_by_budget: bool = False) -> ReviewOutput:
    reviews = await list_reviews(gh, target.owner, target.repo, target.number)
    return analyzers_review(plan_json, analyzed.entries, head_sha=target.head_sha,
                            app_login=await services.app_login(), reviews=reviews, why=why,
                            noise=noise_budget(services, target), held_by_budget=held_by_budget,
                            notes=analyzed.notes)


async def _threads_to_close(services: Services, target: Target, output: ReviewOutput) -> tuple[int, ...]:
    """The app's threads of findings a push resolved and this head does not have again."""
    if services.learnings is None or output.status != "completed":
        return ()
    return to_close(await services.learnings.followed(target.pull_key), output.ledger)


async def _model_review(services: Services, gh: GitHubClient, target: Target, gathered: Gathered,
                        plan_json: dict, config: EffectiveConfig, stage: _Stage, step: Step | None,
                        analyzed: AnalyzerStep, usage: Usage) -> ReviewOutput:
    files = await read_paths(gh, target.owner, target.repo, referenced_paths(plan_json), gathered.merge_base)
    reviews = await list_reviews(gh, target.owner, target.repo, target.number)
    login = await services.app_login()
    patches = [{"filename": f.path, "status": f.status, "patch": f.patch, "previous_filename": f.previous_path}
               for f in gathered.comparison.files]
    stage.name = "reading the repository index"
    index = await _index_context(services, gh, target, gathered, config, patches, plan_json.get("ignored", []))
    stage.name = "reading the issues the pull request closes"
    intent = await read_intent(gh, target, gathered.pull)
    stage.name = "running the model review"
    scope: ReviewScope = step.scope if step is not None else FULL
    learned = None
    if services.learnings is not None:
        stage.name = "reading the learnings"
        learned = await learn.for_review(services.learnings, _place(services, gh, target, login))
        followed = await services.learnings.followed(target.pull_key)
        scope = replace(scope, dismissed=frozenset(f.tracked.fingerprint for f in followed if f.state == "dismissed"))
    return await run_review(plan_json, files=files, patches=patches, providers=config.providers,
                            session=services.http, head_sha=target.head_sha, app_login=login,
                            reviews=reviews, secrets_dir=services.secrets_dir, scope=scope,
                            index=index.retrieval if index else None, lookups=index.lookups if index else None,
                            learned=learned, walkthrough=_walkthrough_on(services, target),
                            analyzers=analyzed.entries, noise=noise_budget(services, target), usage=usage,
                            secret_lines=analyzed.secrets, intent=intent)


def _walkthrough_on(services: Services, target: Target) -> bool:
    """The admin file's `reviews.walkthrough` (on unless switched off)."""
    admin = services.admin.current
    return admin is None or bool(admin.review_limits(target.full_name).walkthrough)


def _diff_of(gathered: Gathered) -> dict:
    """The pull request's diff at its head, by path (what a force-push is judged against)."""
    return read_patches([{"filename": f.path, "status": f.status, "patch": f.patch} for f in gathered.comparison.files])


def _place(services: Services, gh: GitHubClient, target: Target, login: str) -> learn.Place:
    return learn.Place(gh, target.owner, target.repo, target.pull_key, login.removesuffix("[bot]"), services.public_url)


async def _over_budget(services: Services, target: Target) -> budgets.Exceeded | budgets.Reservation | None:
    """The budget this review would pass; else, with the review counted, the tokens held for it
    (None without a token budget) (docs/configuration.md)."""
    admin = services.admin.current
    if services.budgets is None:
        return None
    # counted with or without limits: a budget set later in the day finds the day's reviews counted
    limits = admin.budgets_for(target.full_name) if admin is not None else BudgetLimits()
    over = await budgets.admit(services.budgets, limits, budgets.account_of(target.full_name))
    if isinstance(over, budgets.Exceeded):
        logger.info("review of %s not sent to a model: budget %s (%s) is spent", target.full_name, over.budget,
                    over.limit.key_path)
    return over


def _budget_report(plan_json: dict, over: budgets.Exceeded) -> CheckRunReport:
    return report_for_budget(plan_json, over.budget, over.limit.value, over.used, over.resets_at,
                             over.limit.key_path, over.limit.origin.line, over.account)


async def _index_context(services: Services, gh: GitHubClient, target: Target, gathered: Gathered,
                         config: EffectiveConfig, patches: list[dict], ignored: list[str]) -> IndexContext | None:
    """The index's pieces for this review, and the lookups its model may ask for. The index helps
    the review and never stops it: a failure to read or build it is logged and the review goes on
    without it (and without lookups)."""
    if services.indexes is None:
        return None
    try:
        admin = services.admin.current
        limits = admin.index_limits if admin is not None else IndexLimits()
        return await review_context(services.indexes, gh, target.full_name, gathered.pull, config, patches,
                                    target.head_sha, DEFAULT_BUDGETS.index, limits, ignored)
    # the store's errors, both backends (StoreError; StoreUnavailable: PostgreSQL away when the
    # index's first open migrates the database, bot.store.migrate_database)
    except (GitHubError, OSError, StoreError) as exc:
        logger.warning("the repository index of %s was not used: %s", target.full_name,
                       exc.describe() if isinstance(exc, GitHubError) else exc)
        return None
