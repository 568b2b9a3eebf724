"""The GitHub reads one review needs, and no more (I/O).

Calls for a pull request whose payload carries it: compare (merge base and changed files in one
answer), the tree at the merge base (which config file exists, which referenced and agent files
exist — one call instead of one per path), and the config file itself. Everything else the plan
needs is in the payload or in those answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bot.config.model import REPO_CONFIG_NAMES
from bot.github import (
    Comparison,
    FileTooLarge,
    GitHubClient,
    RepoTree,
    merge_base_and_files,
    pull_request,
    read_file,
    tree,
)
from bot.pipeline.targets import Target
from bot.plan.config_files import changes_config, present_names

READ_CONCURRENCY = 4


@dataclass(frozen=True)
class HeadConfig:
    """The head's side of a pull request that changes the configuration file."""

    files: dict[str, str]  # config file names present at the head → text
    tree: frozenset[str]


@dataclass(frozen=True)
class Gathered:
    pull: dict[str, Any]
    comparison: Comparison
    tree: RepoTree
    config_files: dict[str, str]  # config file names present at the merge base → text
    head: HeadConfig | None  # set when the pull request changes the configuration file

    @property
    def merge_base(self) -> str:
        return self.comparison.merge_base

    @property
    def changed(self) -> list[str]:
        return [f.path for f in self.comparison.files]


async def gather(gh: GitHubClient, target: Target) -> Gathered:
    pull = target.pull or await pull_request(gh, target.owner, target.repo, target.number)
    comparison = await merge_base_and_files(gh, target.owner, target.repo, pull["base"]["sha"], target.head_sha,
                                            pull_number=target.number)
    base_tree = await tree(gh, target.owner, target.repo, comparison.merge_base)
    config_files = await _config_files(gh, target, comparison.merge_base, base_tree)
    head = None
    if changes_config([f.path for f in comparison.files]):
        head_tree = await tree(gh, target.owner, target.repo, target.head_sha)
        head = HeadConfig(await _config_files(gh, target, target.head_sha, head_tree), head_tree.paths)
    return Gathered(pull, comparison, base_tree, config_files, head)


async def _config_files(gh: GitHubClient, target: Target, ref: str, at: RepoTree) -> dict[str, str]:
    """The config file names present at `ref` → text. Only the first is read: when both exist,
    that is an error whatever they hold. A truncated tree (a very large repository) cannot say
    which exist, so both are asked for."""
    if not at.truncated:
        names = present_names(at.paths)
        if not names:
            return {}
        first = await read_file(gh, target.owner, target.repo, names[0], ref)
        return {names[0]: first or "", **{name: "" for name in names[1:]}}
    texts = await asyncio.gather(*(read_file(gh, target.owner, target.repo, n, ref) for n in REPO_CONFIG_NAMES))
    return {name: text for name, text in zip(REPO_CONFIG_NAMES, texts, strict=False) if text is not None}


async def read_paths(gh: GitHubClient, owner: str, repo: str, paths: Iterable[str], ref: str) -> dict[str, str]:
    """Contents of the files a review sends to the model; a file too large or gone is left out."""
    limit = asyncio.Semaphore(READ_CONCURRENCY)

    async def one(path: str) -> tuple[str, str | None]:
        async with limit:
            try:
                return path, await read_file(gh, owner, repo, path, ref)
            except FileTooLarge:
                return path, None

    results = await asyncio.gather(*(one(p) for p in sorted(set(paths))))
    return {path: text for path, text in results if text is not None}
