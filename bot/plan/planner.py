"""The planner: (effective configuration, pull request, file tree at the merge base) → plan.

Pure, shared by the server and `reviewer plan`. The decision follows docs/plan.md: one skip reason
wins, in the order invalid-config, disabled, filtered, ignored-only; otherwise the plan names the
files to review, the rules and context entries that apply (admin first, with the paths that made
them apply), the agent files, and the settings the review runs with.

Cheap before costly: globs are matched for all entries in one pass per file (`GlobSet`), and a
rule's `whenExpr` — the slow part, pure-Python CEL — is evaluated only when the rule's `paths`
matched something, once per distinct text.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Literal

from bot.config.model import EffectiveConfig, Expr
from bot.expr.cel import CelCompileError, CelInput, CelRuntimeError, cel_input, compile_expression, evaluate_bool
from bot.expr.globs import compiled_globs
from bot.plan.agent_files import MAX_AGENT_FILES, agent_files
from bot.plan.model import LAYER_NAMES, Plan, PlanError, PlannedContext, PlannedRule, SkipReason
from bot.plan.references import References, check_references


def make_plan(config: EffectiveConfig, pr: Mapping, changed: Sequence[str], tree: Collection[str],
              config_path: str | None, errors: Sequence[PlanError] = ()) -> Plan:
    """`changed`: every changed path in the pull request's order (deleted ones included, renamed
    ones under their new path). `errors`: configuration errors already found; one from the
    merge-base version makes the plan `invalid-config`, head-only ones do not stop the review."""
    present = tree if isinstance(tree, (set, frozenset)) else frozenset(tree)
    found = check_references(config, present, config_path)
    all_errors = [*errors, *found.errors]
    notes = list(found.notes)
    files, ignored = split_ignored(config, list(dict.fromkeys(changed)))

    def skip(reason: SkipReason) -> Plan:
        return _plan(config, found, files, ignored, all_errors, notes, reason)

    if any(error.source == "merge-base" for error in all_errors):
        return skip("invalid-config")
    if not config.enabled:
        notes.append(f"Reviews are off: {config.disabled_by}." if config.disabled_by else "Reviews are off.")
        return skip("disabled")
    data = cel_input(pr)
    if not _passes_filters(config, data, config_path, all_errors, notes):
        return skip("filtered")
    if not files:
        notes.append("Every changed path is ignored." if ignored else "The pull request changes no file.")
        return skip("ignored-only")
    left_out: list[str] = []
    rules = _rules(config, files, found, data, config_path, all_errors, left_out)
    context = _context(config, files, found, left_out)
    agents: list[str] = []
    if config.agent_files:
        agents, over = agent_files(files, present)
        if over:
            notes.append(f"{over} more agent file(s) are left out: at most {MAX_AGENT_FILES} are given, "
                         f"the shallowest first.")
    return replace(_plan(config, found, files, ignored, all_errors, notes, None, rules, context, agents),
                   left_out=tuple(left_out))


def split_ignored(config: EffectiveConfig, changed: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(paths to review, ignored paths), each in the order given."""
    globs = compiled_globs(tuple(glob.pattern for glob in config.ignore))
    files: list[str] = []
    ignored: list[str] = []
    for path in changed:
        (ignored if globs.any(path) else files).append(path)
    return tuple(files), tuple(ignored)


def _plan(config: EffectiveConfig, found: References, files: tuple[str, ...], ignored: tuple[str, ...],
          errors: list[PlanError], notes: list[str], reason: SkipReason | None,
          rules: Sequence[PlannedRule] = (), context: Sequence[PlannedContext] = (),
          agents: Sequence[str] = ()) -> Plan:
    return Plan(decision="skip" if reason else "review", skip_reason=reason, models=config.models,
                feedback=config.feedback, comments=found.comments,
                require_suggested_fix=config.require_suggested_fix, approve=config.approve,
                files=files, ignored=ignored, rules=tuple(rules), context=tuple(context),
                agent_files=tuple(agents), errors=tuple(errors), notes=tuple(notes))


def _where(expr: Expr) -> str:
    origin = expr.origin
    return f"{origin.file}:{origin.line}" if origin.file else f"line {origin.line}"


def _cel_error(expr: Expr, config_path: str | None, code: str, message: str) -> PlanError:
    origin = expr.origin
    source: Literal["merge-base", "admin"] = "merge-base" if expr.source == "repository" else "admin"
    path = (config_path or origin.file) if expr.source == "repository" else origin.file
    return PlanError(path, source, origin.line, origin.column, origin.pointer, code, message)


def _evaluate(expr: Expr, data: CelInput) -> tuple[bool | None, str, str]:
    """(value or None, error code, error message)."""
    try:
        return evaluate_bool(compile_expression(expr.text), data), "", ""
    except CelRuntimeError as error:
        return None, "cel-runtime", error.message
    except CelCompileError as error:  # a configuration that skipped validation
        return None, error.code, error.message


def _passes_filters(config: EffectiveConfig, data: CelInput, config_path: str | None,
                    errors: list[PlanError], notes: list[str]) -> bool:
    """Every `filterExpr`, instance first, ANDed; one that fails to evaluate skips the review."""
    for expr in config.filter_exprs:
        value, code, message = _evaluate(expr, data)
        if value is None:
            errors.append(_cel_error(expr, config_path, code, f"filterExpr failed: {message}; the review is "
                                                              f"skipped (filtered)"))
            return False
        if not value:
            notes.append(f"The filterExpr of {LAYER_NAMES.get(expr.source, expr.source)} ({_where(expr)}) is "
                         f"false for this pull request: `{expr.text}`.")
            return False
    return True


def _matched(paths_per_entry: Sequence[tuple[str, ...]], files: tuple[str, ...]) -> list[Sequence[str]]:
    """For each entry, the files its globs match (all files for an entry without globs)."""
    patterns: list[str] = []
    owners: list[int] = []
    for owner, paths in enumerate(paths_per_entry):
        patterns += paths
        owners += [owner] * len(paths)
    matched: list[list[str]] = [[] for _ in paths_per_entry]
    if patterns:
        globs = compiled_globs(tuple(patterns))
        for path in files:
            last = -1
            for index in globs.matching(path):  # ascending, so owners come grouped
                owner = owners[index]
                if owner != last:
                    matched[owner].append(path)
                    last = owner
    return [matched[i] if paths else files for i, paths in enumerate(paths_per_entry)]


def _rules(config: EffectiveConfig, files: tuple[str, ...], found: References, data: CelInput,
           config_path: str | None, errors: list[PlanError], left_out: list[str]) -> list[PlannedRule]:
    matched = _matched([rule.paths for rule in config.rules], files)
    results: dict[str, tuple[bool | None, str, str]] = {}
    planned: list[PlannedRule] = []
    for index, rule in enumerate(config.rules):
        name = f"rule `{rule.id}` ({rule.source})"
        if index in found.dropped_rules:
            left_out.append(f"{name}: its file `{rule.file}` does not exist at the merge base")
            continue
        if not matched[index]:
            left_out.append(f"{name}: its paths match none of the files to review")
            continue
        if rule.when_expr is not None:
            text = rule.when_expr.text
            if text not in results:
                results[text] = _evaluate(rule.when_expr, data)
            value, code, message = results[text]
            if value is None:
                errors.append(_cel_error(rule.when_expr, config_path, code,
                                         f"whenExpr of rule `{rule.id}` failed: {message}; the rule is left out"))
            if not value:
                left_out.append(f"{name}: its whenExpr is {'false' if value is False else 'in error'}")
                continue
        planned.append(PlannedRule(rule.id, rule.source, rule.rule, rule.file, tuple(matched[index])))
    return planned


def _context(config: EffectiveConfig, files: tuple[str, ...], found: References,
             left_out: list[str]) -> list[PlannedContext]:
    matched = _matched([entry.paths for entry in config.context], files)
    planned: list[PlannedContext] = []
    for index, entry in enumerate(config.context):
        name = f"context `{entry.path}` ({entry.source})"
        if index in found.dropped_context:
            left_out.append(f"{name}: the file does not exist at the merge base")
        elif not matched[index]:
            left_out.append(f"{name}: its paths match none of the files to review")
        else:
            planned.append(PlannedContext(entry.path, entry.description, entry.source, tuple(matched[index])))
    return planned
