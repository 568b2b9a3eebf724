"""The one path from a change's facts to its plan, shared by `reviewer plan` and the server.

Both read the same things — the config files present at the merge base, the tree there, the
changed paths, the `pr` object, and the head's config files when the change touches them — from
git or from GitHub; from there on the steps are pure and must be the same, so they live here once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from bot.config.admin import AdminConfig
from bot.config.layering import effective_config
from bot.config.model import EffectiveConfig
from bot.plan.config_files import changes_config, head_errors, load_config_file
from bot.plan.model import Plan
from bot.plan.planner import make_plan

HeadFiles = tuple[Mapping[str, bytes | str], Collection[str]]  # (config files at the head, head tree)


def plan_change(admin: AdminConfig | None, full_name: str | None, pr: Mapping, changed: Sequence[str],
                tree: Collection[str], config_files: Mapping[str, bytes | str],
                head: HeadFiles | None = None) -> tuple[Plan, EffectiveConfig]:
    """`config_files`: the config file names present at the merge base → contents. `head`: given
    when the change touches the config file, so that its new version is validated too."""
    repo_config, config_path, errors = load_config_file(config_files, admin, full_name, "merge-base")
    config = effective_config(admin, repo_config, full_name)
    if head is not None and changes_config(changed):
        errors += head_errors(head[0], head[1], admin, full_name)
    return make_plan(config, pr, changed, tree, config_path, errors), config
