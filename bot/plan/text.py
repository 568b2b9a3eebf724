"""The plan for people: what will be reviewed, which rules apply and why, what was skipped and why."""

from __future__ import annotations

from collections.abc import Sequence

from bot.config.model import EffectiveConfig
from bot.plan.model import Plan

SHOWN = 10  # paths listed per entry before "… and N more"

_SKIPS = {
    "invalid-config": "the configuration at the merge base is invalid (errors below)",
    "disabled": "reviews are off for this repository",
    "filtered": "a filterExpr excludes this pull request",
    "ignored-only": "no changed path is left to review once `ignore` is applied",
}


def _paths(paths: Sequence[str], limit: int = SHOWN) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f", … and {len(paths) - limit} more" if len(paths) > limit else "")


def _count(items: Sequence, word: str) -> str:
    return f"{len(items)} {word}{'' if len(items) == 1 else 's'}"


def _list(title: str, lines: Sequence[str]) -> list[str]:
    return ["", title, *(f"  {line}" for line in lines)] if lines else []


def render_text(plan: Plan, config: EffectiveConfig, header: str) -> str:
    out = [header]
    if plan.decision == "review":
        out.append(f"Decision: review — {_count(plan.files, 'file')}, {_count(plan.rules, 'rule')}, "
                   f"{_count(plan.context, 'context file')}")
    else:
        out.append(f"Decision: skip ({plan.skip_reason}) — {_SKIPS.get(plan.skip_reason or '', '')}")
    out += _list(f"Files to review ({len(plan.files)}):", list(plan.files))
    out += _list(f"Ignored ({len(plan.ignored)}):", list(plan.ignored))
    if plan.decision == "review":
        out += _list(f"Rules that apply ({len(plan.rules)}), admin first:", _rule_lines(plan, config))
        out += _list("Left out:", list(plan.left_out))
        out += _list(f"Context ({len(plan.context)}):", [
            f"{c.path} [{c.source}] \"{c.description}\" — for {_count(c.matched_paths, 'file')}"
            for c in plan.context])
        out += ["", f"Agent files: {_paths(plan.agent_files) if plan.agent_files else 'none'}"]
    out += ["", "Settings: " + _settings(plan)]
    out += _list(f"Errors ({len(plan.errors)}):", [
        f"{e.path}:{e.line}:{e.column}: {e.code} [{e.source}]: {e.message}" for e in plan.errors])
    out += _list("Notes:", [f"- {note}" for note in plan.notes])
    return "\n".join(out) + "\n"


def _rule_lines(plan: Plan, config: EffectiveConfig) -> list[str]:
    when = {rule.id: rule.when_expr.text for rule in config.rules if rule.when_expr is not None}
    paths = {rule.id: rule.paths for rule in config.rules}
    lines = []
    for rule in plan.rules:
        what = f"file {rule.file}" if rule.file else _first_line(rule.rule or "")
        if paths.get(rule.id):
            why = f"paths match {_count(rule.matched_paths, 'file')}: {_paths(rule.matched_paths)}"
        else:
            why = f"no paths: every file ({len(rule.matched_paths)})"
        if rule.id in when:
            why += f"; whenExpr is true: {when[rule.id]}"
        lines.append(f"{rule.id} [{rule.source}] {what} — {why}")
    return lines


def _first_line(text: str, width: int = 60) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return f'"{line[:width]}…"' if len(line) > width or "\n" in text.strip() else f'"{line}"'


def _settings(plan: Plan) -> str:
    models, comments = plan.models, plan.comments
    parts = [f"review model {models.review or 'not set'}, fallback {models.fallback or 'not set'}",
             f"feedback {plan.feedback}", f"inline comments {'on' if comments.inline else 'off'}"]
    if comments.summary_template:
        parts.append(f"summary template {comments.summary_template}")
    if comments.inline_template:
        parts.append(f"inline template {comments.inline_template}")
    parts += [f"requireSuggestedFix {str(plan.require_suggested_fix).lower()}",
              f"approve {str(plan.approve).lower()}"]
    return "; ".join(parts)
