"""From what was read on GitHub to a plan: the same pure steps `reviewer plan` takes from git."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.config.admin import AdminConfig
from bot.config.model import EffectiveConfig
from bot.pipeline.gather import Gathered
from bot.pipeline.targets import Target
from bot.plan.model import Plan
from bot.plan.pr import pr_from_github
from bot.plan.prepare import plan_change


def plan_for(admin: AdminConfig | None, gathered: Gathered, target: Target) -> tuple[Plan, EffectiveConfig]:
    pr = pr_from_github(gathered.pull, target.event, gathered.changed)
    head = (gathered.head.files, gathered.head.tree) if gathered.head is not None else None
    return plan_change(admin, target.full_name, pr, gathered.changed, gathered.tree.paths,
                       gathered.config_files, head)


def referenced_paths(plan: Mapping[str, Any]) -> set[str]:
    """Files whose content the model review needs, all read at the merge base."""
    paths = {rule["file"] for rule in plan["rules"] if rule.get("file")}
    paths.update(entry["path"] for entry in plan["context"])
    paths.update(plan["agentFiles"])
    paths.update(t for t in (plan["comments"]["summaryTemplate"], plan["comments"]["inlineTemplate"]) if t)
    return paths
