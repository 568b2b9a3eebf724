"""The analyzers' step of a local review (I/O: git): the built-in analyzers the admin file turns on
(secret scanning by default), run on the change as a pull request's review job runs them
(bot/pipeline/analyzer_step.py), with git in place of the GitHub API. Their findings, filtered to the
diff, mapped to our severities (linters are minor at most, the admin file's `analyzers.severity`)
and shaped by the plan as on a pull request, are the analyzers' entries of the head's ledger: they
go to the engine beside the model's (its prompt lists them, and a model finding saying the same at
the same lines is left out) and are among the review's findings, as a reader of the pull request
sees them. No upload exists here. The lines the secret scanner flags are kept from every finding
as on a pull request (bot/reviews/secret_lines.py): no suggestion on them, no code of them kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping

from bot.analyzers.builtin import config_paths, run_builtins, wanted_files
from bot.analyzers.feed import entries
from bot.analyzers.filter import place
from bot.analyzers.secret_guard import flagged, guarded
from bot.analyzers.settings import AnalyzerSettings, analyzer_settings
from bot.analyzers.severity import mapped
from bot.config.admin import AdminConfig
from bot.index.gitsource import GitSnapshot
from bot.reviews.diff import read_patches
from bot.reviews.fingerprints import PostedFinding
from bot.reviews.ledger import Entry
from bot.reviews.secret_lines import NO_SECRETS, SecretLines


async def analyze_change(repo: str, full_name: str | None, head_sha: str, plan: dict, patches: list[dict],
                         admin: AdminConfig | None, posted: Iterable[PostedFinding] = ()
                         ) -> tuple[tuple[Entry, ...], tuple[str, ...], SecretLines]:
    """(the analyzers' entries of the head's ledger, as a pull request's review gets them, notes,
    the lines holding a secret); `posted`: the findings the pull request has already, of every
    source."""
    settings = analyzer_settings(admin, full_name) if admin is not None else AnalyzerSettings()
    if not settings.builtins:
        return (), (), NO_SECRETS
    file_patches = read_patches(patches)
    wanted, configs = wanted_files(settings, file_patches), config_paths(settings, file_patches)
    snapshot = GitSnapshot(repo, head_sha)
    files: Mapping[str, bytes] = await asyncio.to_thread(snapshot.read, wanted) if wanted else {}
    config_files: Mapping[str, bytes] = await asyncio.to_thread(snapshot.read, configs) if configs else {}
    run = await run_builtins(settings, file_patches, files, config_files)
    secrets = flagged(run.results)
    clean = secrets.blanked(file_patches)  # what is fingerprinted and kept of a finding leaves those lines out
    results = mapped(run.results, settings.severity)
    placement = guarded(place(results, clean, mode=settings.filter, max_inline_per_tool=settings.max_inline_per_tool),
                        secrets)
    fed = entries(placement, plan, posted, clean)
    return fed.entries, (*run.notes, *fed.notes), secrets
