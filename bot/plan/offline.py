"""The plan the app would post, computed from a local git checkout (`reviewer plan`).

The same steps as the server, with git in place of the GitHub API: the merge base of base and
head; `.reviewer.yaml` (or `.reviewer.yml`) read and validated there, layered on the admin file;
the tree there for referenced and agent files; the changed paths merge base → head; `pr` from git
or from `--pr FILE`. A pull request that changes the configuration file is planned with the
merge-base version, and the head version's errors are listed with source `head`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.config.admin import AdminConfig, load_admin_config
from bot.config.model import EffectiveConfig
from bot.documents.diagnostics import format_text
from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.plan import git
from bot.plan.config_files import changes_config, present_names
from bot.plan.model import Plan
from bot.plan.pr import pr_from_git, pr_from_github
from bot.plan.prepare import plan_change


class UsageError(ValueError):
    """Bad input to the command (unreadable or invalid admin file, bad `--pr` file): exit 2."""


@dataclass(frozen=True)
class OfflinePlan:
    plan: Plan
    config: EffectiveConfig
    base: str
    head: str
    merge_base: str
    head_sha: str
    full_name: str | None


def plan_from_git(repo: str, base: str | None = None, head: str = "HEAD", admin_path: str | None = None,
                  full_name: str | None = None, pr_path: str | None = None) -> OfflinePlan:
    """Raises git.GitError (git failed, a ref is unknown) or UsageError."""
    git.check_repository(repo)
    admin = read_admin_file(admin_path)
    full_name = full_name or git.origin_full_name(repo)
    base = base or git.default_base(repo)
    base_sha, head_sha = git.resolve(repo, base), git.resolve(repo, head)
    merge_base = git.merge_base(repo, base_sha, head_sha)
    tree = git.list_tree(repo, merge_base)
    changed = git.changed_paths(repo, merge_base, head_sha)

    head_files = None
    if changes_config(changed):
        head_tree = git.list_tree(repo, head_sha)
        head_files = (_config_files(repo, head_sha, head_tree), head_tree)
    pr = _pr(repo, pr_path, merge_base, head_sha, base, head, changed)
    plan, config = plan_change(admin, full_name, pr, changed, tree, _config_files(repo, merge_base, tree),
                               head_files)
    return OfflinePlan(plan, config, base, head, merge_base, head_sha, full_name)


def read_admin_file(path: str | None) -> AdminConfig | None:
    """The admin file at `path` (None: no admin file); UsageError when unreadable or invalid."""
    if path is None:
        return None
    try:
        text = Path(path).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read the admin configuration {path}: {error.strerror}") from None
    admin, problems = load_admin_config(text, path)
    if admin is None:
        lines = "\n".join(format_text(path, problems))
        raise UsageError(f"the admin configuration {path} is invalid:\n{lines}")
    return admin


def _config_files(repo: str, commit: str, tree: frozenset[str]) -> dict[str, bytes]:
    return {name: git.read_blob(repo, commit, name) for name in present_names(tree)}


def _pr(repo: str, pr_path: str | None, merge_base: str, head_sha: str, base: str, head: str,
        changed: list[str]) -> dict:
    if pr_path is None:
        return pr_from_git(git.head_facts(repo, merge_base, head_sha), base, head, changed)
    try:
        data = parse_json(Path(pr_path).read_bytes())
    except OSError as error:
        raise UsageError(f"cannot read the pull request file {pr_path}: {error.strerror}") from None
    except JsonBodyError as error:
        raise UsageError(f"{pr_path} is not usable JSON: {error.message}") from None
    if isinstance(data, dict) and isinstance(data.get("pull_request"), dict):
        data = data["pull_request"]  # a saved webhook payload
    if not isinstance(data, dict) or "number" not in data:
        raise UsageError(f"{pr_path} is not a GitHub pull request object (no `number`)")
    return pr_from_github(data, "manual", changed)
