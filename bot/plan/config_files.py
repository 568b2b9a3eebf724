"""The repository's configuration file as the planner needs it, from contents already read.

Shared by `reviewer plan` (git) and the server (GitHub's contents API): the caller reads the
config file names present at a commit (`REPO_CONFIG_NAMES`), and these pure functions turn them
into the repository layer and `PlanError`s — `both-config-files` when both names are present,
every validation error with the version it belongs to (`merge-base` or `head`), and for the head
version the files it names that the head lacks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from bot.config.admin import AdminConfig
from bot.config.layering import effective_config
from bot.config.model import REPO_CONFIG_NAMES
from bot.config.repo import RepoConfig, load_repo_config
from bot.plan.model import ErrorSource, PlanError
from bot.plan.references import check_references


def present_names(tree: Collection[str]) -> list[str]:
    """Which of `.reviewer.yaml`, `.reviewer.yml` a commit has, in that order."""
    return [name for name in REPO_CONFIG_NAMES if name in tree]


def load_config_file(files: Mapping[str, bytes | str], admin: AdminConfig | None, full_name: str | None,
                     source: ErrorSource) -> tuple[RepoConfig | None, str | None, list[PlanError]]:
    """(the repository layer or None, the file's path or None, its errors). `files`: the config
    file names present at the commit → their contents."""
    names = [name for name in REPO_CONFIG_NAMES if name in files]
    if not names:
        return None, None, []
    if len(names) > 1:
        both = PlanError(names[1], source, 1, 1, "", "both-config-files",
                         f"both {names[0]} and {names[1]} exist; keep one of them ({names[0]})")
        return None, names[0], [both]
    config, problems = load_repo_config(files[names[0]], names[0], admin, full_name)
    return config, names[0], [PlanError.from_diagnostic(names[0], source, problem) for problem in problems]


def head_errors(files: Mapping[str, bytes | str], tree: Collection[str], admin: AdminConfig | None,
                full_name: str | None) -> list[PlanError]:
    """The head version of a changed configuration file, validated (source `head`), including the
    files it names that do not exist in the head's `tree`."""
    config, path, errors = load_config_file(files, admin, full_name, "head")
    if config is not None:
        errors += check_references(effective_config(admin, config, full_name), tree, path, "head").errors
    return errors


def changes_config(changed: Collection[str]) -> bool:
    return any(name in changed for name in REPO_CONFIG_NAMES)
