"""The analyzers' step of a review job (I/O): results for the head — uploaded from CI (the
`sarif_uploads` table, bot/store/uploads.py) and the built-in analyzers' (bot/analyzers/builtin) —
mapped to the admin file's severities, filtered to the diff, and fed to the head's ledger
(bot/analyzers/feed.py) with what the pull request has already (the review memory's
`review_findings`), so that a re-upload or a second run posts nothing new. Nothing is posted here:
the review job posts them with the model's, in one review (bot/pipeline/post.py), and an upload's
own job (bot/pipeline/upload_job.py) posts what an upload adds after the review ran. Logs name
tools and counts only: a result's message or code never reaches them.
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
from bot.github import GitHubClient
from bot.learnings.review import leave_out_findings
from bot.pipeline.gather import Gathered, read_paths
from bot.pipeline.services import Services
from bot.pipeline.targets import Target
from bot.reviews.diff import FilePatch, read_patches
from bot.reviews.ledger import Entry, NoiseBudget
from bot.reviews.secret_lines import NO_SECRETS, SecretLines

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


def noise_budget(services: Services, target: Target) -> NoiseBudget:
    """The admin file's `reviews.maxInlineComments` and `inlineSeverityFloor` for the repository."""
    admin = services.admin.current
    if admin is None:
        return NoiseBudget()
    limits = admin.review_limits(target.full_name)
    return NoiseBudget(limits.max_inline_comments, limits.inline_severity_floor)
