"""Files a configuration names — `rule.file`, `context.path`, comment templates — must exist at
the merge base. A missing one in the repository's file is an error at the reference; a missing
one in an admin entry leaves that entry out, with a note, since the repository's owner cannot fix
the admin file and the rest of the review should still happen.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection
from dataclasses import dataclass, field

from bot.config.model import Comments, EffectiveConfig, Origin
from bot.plan.model import LAYER_NAMES, ErrorSource, PlanError

_AT = {"merge-base": "at the merge base", "head": "in the pull request's head"}


def normalise(path: str) -> str:
    """`./docs/../STYLE.md` → `STYLE.md`: the validator allows such paths inside the root."""
    return posixpath.normpath(path).lstrip("/")


@dataclass
class References:
    """What the check found: errors (repository file), notes, and the admin entries left out."""

    errors: list[PlanError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dropped_rules: set[int] = field(default_factory=set)  # indices into config.rules
    dropped_context: set[int] = field(default_factory=set)
    comments: Comments = Comments()
    source: ErrorSource = "merge-base"  # the version whose tree was looked at


def check_references(config: EffectiveConfig, tree: Collection[str], config_path: str | None,
                     source: ErrorSource = "merge-base") -> References:
    found = References(comments=config.comments, source=source)
    present = tree if isinstance(tree, (set, frozenset)) else set(tree)
    for index, rule in enumerate(config.rules):
        if rule.file is not None and normalise(rule.file) not in present:
            origin = rule.file_origin or rule.origin
            if _missing(found, rule.source, rule.file, origin, config_path, f"rule `{rule.id}`"):
                found.dropped_rules.add(index)
    for index, entry in enumerate(config.context):
        if normalise(entry.path) not in present:
            if _missing(found, entry.source, entry.path, entry.origin, config_path, "context entry"):
                found.dropped_context.add(index)
    found.comments = _templates(found, config, present, config_path)
    return found


def _templates(found: References, config: EffectiveConfig, present: Collection[str],
               config_path: str | None) -> Comments:
    comments = config.comments
    summary, inline = comments.summary_template, comments.inline_template
    for key, path, origin in (("summaryTemplate", summary, comments.summary_template_origin),
                              ("inlineTemplate", inline, comments.inline_template_origin)):
        if path is None or normalise(path) in present:
            continue
        layer = config.sources.get(f"comments.{key}", "repository")
        if origin is None:
            origin = Origin(config_path or "", f"/comments/{key}", 1, 1)
        if _missing(found, layer, path, origin, config_path, f"comments.{key}"):
            summary = None if key == "summaryTemplate" else summary
            inline = None if key == "inlineTemplate" else inline
    return Comments(comments.inline, summary, inline, comments.summary_template_origin,
                    comments.inline_template_origin)


def _missing(found: References, layer: str, path: str, origin: Origin, config_path: str | None,
             what: str) -> bool:
    """Record a missing file; True when the entry is an admin one and is to be left out."""
    if layer == "repository":
        found.errors.append(PlanError(
            config_path or origin.file, found.source, origin.line, origin.column, origin.pointer, "missing-file",
            f"{what} names `{path}`, which does not exist {_AT[found.source]}; add the file or fix the path"))
        return False
    where = f"{origin.file}:{origin.line}" if origin.file else f"line {origin.line}"
    found.notes.append(f"The {what} of {LAYER_NAMES.get(layer, layer)} ({where}) is left out: "
                       f"`{path}` does not exist in this repository {_AT[found.source]}.")
    return True

