"""A change of a local git repository read as the server reads a pull request (I/O: git).

The merge base of base and head; the configuration there (or a file given in its place), layered
on the admin file and planned with the server's planner (bot/plan/prepare.py); the files the plan
names, read at the merge base; the diff as GitHub's per-file entries; and what the repository
index retrieves for the change with the lookups the model may ask for (bot/local/indexes.py).
A change to the configuration file is planned with the merge base's version, the head's errors
listed in the plan, as on a pull request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from bot.config.admin import AdminConfig
from bot.config.model import REPO_CONFIG_NAMES, EffectiveConfig, Provider
from bot.engine.lookups import RepositoryLookups
from bot.index.gitdiff import diff_entries
from bot.index.retrieve import Retrieval
from bot.local.indexes import Indexes, retrieval
from bot.pipeline.configure import referenced_paths
from bot.plan import git
from bot.plan.config_files import changes_config, present_names
from bot.plan.pr import pr_from_git, pr_from_github
from bot.plan.prepare import plan_change
from bot.store.model import StoreError


@dataclass(frozen=True)
class Change:
    """Everything the review step takes, read from git."""

    plan: dict
    config: EffectiveConfig
    files: dict[str, str]  # the files the plan names, at the merge base
    patches: list[dict]  # GitHub's per-file entries of merge base...head
    index: Retrieval | None
    merge_base: str
    head_sha: str
    repo: str  # the git repository
    full_name: str | None  # its name on GitHub (account settings of the admin file, the analyzers')
    notes: tuple[str, ...] = ()
    lookups: RepositoryLookups | None = None  # with the index: what the model may look up

    @property
    def providers(self) -> Mapping[str, Provider]:
        return self.config.providers


@dataclass(frozen=True)
class Refs:
    """What to review: `base` and `head` as given (refs or commit ids)."""

    base: str
    head: str


def read_change(repo: str, refs: Refs, admin: AdminConfig | None, indexes: Indexes, *,
                full_name: str | None = None, config_file: bytes | None = None,
                pull: Mapping[str, Any] | None = None, event: str = "manual") -> Change:
    """Raises git.GitError when the repository or a commit cannot be read. `config_file`: the
    repository configuration to use in place of the merge base's (a corpus case's); `pull`: the
    pull request object (a GitHub Actions event's) that `pr` in CEL expressions is made from,
    else `pr` comes from the head commit (docs/plan.md)."""
    git.check_repository(repo)
    base_sha, head_sha = git.resolve(repo, refs.base), git.resolve(repo, refs.head)
    merge_base = git.merge_base(repo, base_sha, head_sha)
    tree = git.list_tree(repo, merge_base)
    changed = git.changed_paths(repo, merge_base, head_sha)
    full_name = full_name or git.origin_full_name(repo)
    head = None
    if config_file is not None:
        config_files: dict[str, bytes] = {REPO_CONFIG_NAMES[0]: config_file}
    else:
        config_files = {n: git.read_blob(repo, merge_base, n) for n in present_names(tree)}
        if changes_config(changed):
            head_tree = git.list_tree(repo, head_sha)
            head = ({n: git.read_blob(repo, head_sha, n) for n in present_names(head_tree)}, head_tree)
    pr = pr_from_github(pull, event, changed) if pull is not None else \
        pr_from_git(git.head_facts(repo, merge_base, head_sha), refs.base, refs.head, changed)
    plan, config = plan_change(admin, full_name, pr, changed, tree, config_files, head)
    plan_json = plan.to_json()
    patches = diff_entries(repo, merge_base, head_sha)
    files = {p: git.read_blob(repo, merge_base, p).decode("utf-8", errors="replace")
             for p in sorted(referenced_paths(plan_json)) if p in tree}
    change = Change(plan_json, config, files, patches, None, merge_base, head_sha, repo, full_name)
    if config.enabled and plan.decision == "review":
        try:
            index, lookups = retrieval(indexes, repo, merge_base, head_sha, patches, admin,
                                       [g.pattern for g in config.ignore], plan_json["ignored"])
        except (OSError, StoreError) as error:  # as on the server: the index helps, it never stops a review
            return replace(change, notes=(f"the repository index was not used: {error}",))
        return replace(change, index=index, lookups=lookups)
    return change
