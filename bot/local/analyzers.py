"""The analyzers' step of a local review (I/O: git): the built-in analyzers the admin file turns on
(secret scanning by default), run on the change as a pull request's review job runs them
(bot/pipeline/analyzers.py), with git in place of the GitHub API. Their findings, filtered to the
diff and shaped by the plan as on a pull request, go to the engine beside the model's (its prompt
lists them, and a model finding saying the same at the same lines is left out) and are among the
review's findings, as a reader of the pull request would see them. No upload exists here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from bot.analyzers.builtin import config_paths, run_builtins, wanted_files
from bot.analyzers.filter import place
from bot.analyzers.findings import AnalyzerFinding
from bot.analyzers.ledger import shape
from bot.analyzers.settings import AnalyzerSettings, analyzer_settings
from bot.config.admin import AdminConfig
from bot.index.gitsource import GitSnapshot
from bot.reviews.diff import read_patches


async def analyze_change(repo: str, full_name: str | None, head_sha: str, plan: dict, patches: list[dict],
                         admin: AdminConfig | None) -> tuple[tuple[AnalyzerFinding, ...], tuple[str, ...]]:
    """(the analyzers' findings a pull request would show, notes) for one change."""
    settings = analyzer_settings(admin, full_name) if admin is not None else AnalyzerSettings()
    if not settings.builtins:
        return (), ()
    file_patches = read_patches(patches)
    wanted, configs = wanted_files(settings, file_patches), config_paths(settings, file_patches)
    snapshot = GitSnapshot(repo, head_sha)
    files: Mapping[str, bytes] = await asyncio.to_thread(snapshot.read, wanted) if wanted else {}
    config_files: Mapping[str, bytes] = await asyncio.to_thread(snapshot.read, configs) if configs else {}
    run = await run_builtins(settings, file_patches, files, config_files)
    placement = place(run.results, file_patches, mode=settings.filter, max_inline_per_tool=settings.max_inline_per_tool)
    shaped = shape(placement, plan, ())
    return (*shaped.new, *shaped.withheld), (*run.notes, *shaped.notes)
