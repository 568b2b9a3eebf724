"""Rendering the posted findings into comment bodies: the summary and one body per inline comment.

Repository templates render all at once in one isolated child (see template_worker); the built-in
templates render here. A repository template that fails is replaced by the built-in one for every
comment it was to render, and the summary says so: the review is never lost to a template. An
analyzer's inline comment is rendered by its source (bot/analyzers/feed.py), never by a template.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.engine.template_worker import render_isolated
from bot.engine.templates import (
    BUILTIN_INLINE,
    BUILTIN_SUMMARY,
    INLINE_LIMIT,
    SUMMARY_LIMIT,
    Rendered,
    RenderJob,
    inline_vars,
    render_jobs,
    summary_vars,
)
from bot.reviews.ledger import Entry
from bot.reviews.markdown import suggestion
from bot.reviews.output import SUMMARY_MARKER, InlineComment


@dataclass(frozen=True, slots=True)
class Comments:
    inline: tuple[InlineComment, ...]
    summary: str
    notes: tuple[str, ...]  # template fallbacks


@dataclass(frozen=True, slots=True)
class _Template:
    option: str  # "summaryTemplate" / "inlineTemplate"
    path: str | None
    source: str | None  # None: use the built-in one


def _template(plan: dict, option: str, files: Mapping[str, str], notes: list[str]) -> _Template:
    path = (plan.get("comments") or {}).get(option)
    source = files.get(path) if path else None
    if path and source is None:
        notes.append(f"{option} {path} was not available at the merge base; the built-in template was used")
    return _Template(option, path, source)


async def _render(jobs: list[tuple[RenderJob, bool]], timeout: float) -> list[Rendered]:
    """Jobs flagged True use a repository template (isolated); the others render here."""
    isolated = iter(await render_isolated([j for j, user in jobs if user], timeout))
    local = iter(render_jobs([j for j, user in jobs if not user]))
    return [next(isolated) if user else next(local) for _, user in jobs]


def render_summary_builtin(variables: dict[str, Any]) -> str:
    rendered = render_jobs([RenderJob(BUILTIN_SUMMARY, variables, SUMMARY_LIMIT)])[0]
    if rendered.text is None:  # the built-in template is ours: failing is a bug, and says so
        raise RuntimeError(f"built-in summary template failed: {rendered.error}")
    return f"{SUMMARY_MARKER}\n{rendered.text}"


async def render_comments(
    posting: Sequence[Entry], plan: dict, *, files: Mapping[str, str], common: dict[str, Any], timeout: float
) -> Comments:
    """`posting`: what the review posts, every source, in the ledger's order (bot/reviews/ledger.py)."""
    notes: list[str] = []
    inline_t = _template(plan, "inlineTemplate", files, notes)
    summary_t = _template(plan, "summaryTemplate", files, notes)
    placed_inline = [e for e in posting if e.inline]
    templated = [e for e in placed_inline if e.comment is None]
    inline_vars_list = [inline_vars(e, common) for e in templated]
    summary_variables = summary_vars(posting, {**common, "notes": [*common["notes"], *notes]})
    jobs = [(RenderJob(inline_t.source or BUILTIN_INLINE, v, INLINE_LIMIT), inline_t.source is not None)
            for v in inline_vars_list]
    jobs.append((RenderJob(summary_t.source or BUILTIN_SUMMARY, summary_variables, SUMMARY_LIMIT),
                 summary_t.source is not None))
    results = await _render(jobs, timeout)

    bodies: dict[int, str] = {}
    for entry, variables, result in zip(templated, inline_vars_list, results[:-1], strict=True):
        if result.text is None:
            _note_failure(notes, inline_t, result.error)
            result = render_jobs([RenderJob(BUILTIN_INLINE, variables, INLINE_LIMIT)])[0]
        bodies[id(entry)] = _with_suggestion(result.text or "", entry.finding.suggested_fix)
    inline = tuple(
        InlineComment(e.finding.path, e.finding.end_line, e.comment if e.comment is not None else bodies[id(e)],
                      start_line=e.finding.start_line if e.finding.start_line != e.finding.end_line else None)
        for e in placed_inline
    )

    summary_result = results[-1]
    if summary_result.text is None:
        _note_failure(notes, summary_t, summary_result.error)
        summary_variables["notes"] = [*common["notes"], *notes]
        summary = render_summary_builtin(summary_variables)
    else:
        summary = f"{SUMMARY_MARKER}\n{summary_result.text}"
        own = [n for n in notes if n not in summary_variables["notes"]]
        summary += "".join(f"\n\n> Note: {n}" for n in own)
    return Comments(inline, summary, tuple(notes))


def _note_failure(notes: list[str], template: _Template, error: str | None) -> None:
    """One note per template, however many comments it failed on: the first error says enough."""
    prefix = f"{template.option} {template.path} failed to render"
    if not any(n.startswith(prefix) for n in notes):
        notes.append(f"{prefix} ({error}); the built-in template was used")


def _with_suggestion(body: str, fix: str | None) -> str:
    """Every inline comment with a fix carries it as a suggestion block, whatever the template."""
    if not fix:
        return body
    block = suggestion(fix)
    return body if block in body else f"{body}\n\n{block}"
