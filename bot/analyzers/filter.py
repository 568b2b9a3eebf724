"""Analyzer results filtered to a pull request's diff, as reviewdog's filter modes do (pure).

reviewdog (filter/diff_filter.go, filter/filter.go) reports a result when one of its lines passes
the mode: `added` — a line the pull request adds (the default); `diff_context` — a line inside one
of the diff's hunks, context included; `file` — anywhere in a changed file; `nofilter` —
anywhere. Here a result that passes is posted inline when it sits on a line the pull request adds
and all its lines lie in one hunk (GitHub refuses an inline comment elsewhere), else in the
summary; a result that does not pass is dropped and counted. A result on a whole file (no lines)
passes `file` and `nofilter`; one on no file, or on a file the pull request does not change,
passes `nofilter` alone. At most `max_inline_per_tool` results of one tool go inline, the most
severe first; the rest go to the summary, counted. A result given twice (the same fingerprint) is
placed once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot.analyzers.findings import AnalyzerFinding, finding_of
from bot.analyzers.fixes import Fix, line_fix, widen
from bot.analyzers.model import SEVERITY_ORDER, AnalyzerResult
from bot.reviews.diff import FilePatch, placeable
from bot.reviews.fingerprints import code_of

MODES = ("added", "diff_context", "file", "nofilter")
DEFAULT_MODE = "added"


@dataclass(frozen=True)
class Placement:
    inline: tuple[AnalyzerFinding, ...] = ()
    summary: tuple[AnalyzerFinding, ...] = ()
    dropped: Mapping[str, int] = field(default_factory=dict)  # tool → results outside the mode
    over_cap: Mapping[str, int] = field(default_factory=dict)  # tool → sent to the summary by the cap
    duplicates: int = 0

    @property
    def findings(self) -> tuple[AnalyzerFinding, ...]:
        return self.inline + self.summary


@dataclass(frozen=True, slots=True)
class _Lines:
    added: frozenset[int]
    in_hunks: frozenset[int]
    text: Mapping[int, str]


def _lines(patch: FilePatch) -> _Lines:
    added, shown, text = set(), set(), {}
    for hunk in patch.hunks:
        for line in hunk.lines:
            if line.new_line is not None:
                shown.add(line.new_line)
                text[line.new_line] = line.text
                if line.kind == "+":
                    added.add(line.new_line)
    return _Lines(frozenset(added), frozenset(shown), text)


def _where(result: AnalyzerResult, patch: FilePatch | None, lines: _Lines | None, mode: str) -> str:
    """"inline", "summary" or "dropped" for one result."""
    if result.path is None or patch is None or lines is None:
        return "summary" if mode == "nofilter" else "dropped"
    if result.start_line is None or result.end_line is None:
        return "summary" if mode in ("file", "nofilter") else "dropped"
    span = range(result.start_line, result.end_line + 1)
    on_added = any(n in lines.added for n in span)
    passes = {"added": on_added, "diff_context": any(n in lines.in_hunks for n in span)}.get(mode, True)
    if not passes:
        return "dropped"
    return "inline" if on_added and placeable(patch, result.start_line, result.end_line) else "summary"


def _fix(result: AnalyzerResult, patch: FilePatch, lines: _Lines, inline: bool) -> Fix | None:
    if not result.edits or result.start_line is None or result.end_line is None:
        return None
    fix = line_fix(result.edits, lines.text)
    if fix is None:
        return None
    fix = widen(fix, result.start_line, result.end_line, lines.text)
    # An inline comment then covers the fix's lines: they must still be a place GitHub takes one.
    if fix is not None and inline and not placeable(patch, fix.start_line, fix.end_line):
        return None
    return fix


def place(results: Iterable[AnalyzerResult], patches: Mapping[str, FilePatch], *, mode: str = DEFAULT_MODE,
          max_inline_per_tool: int | None = None) -> Placement:
    """Each result inline, in the summary or dropped, as `mode` says (one of MODES)."""
    if mode not in MODES:
        raise ValueError(f"filter mode {mode!r} is not one of {', '.join(MODES)}")
    reads: dict[str, _Lines] = {}
    seen: set[str] = set()
    inline: list[AnalyzerFinding] = []
    summary: list[AnalyzerFinding] = []
    dropped: Counter[str] = Counter()
    duplicates = 0
    for result in results:
        patch = patches.get(result.path) if result.path is not None else None
        lines = None
        if patch is not None and result.path is not None:
            lines = reads.setdefault(result.path, _lines(patch))
        where = _where(result, patch, lines, mode)
        if where == "dropped":
            dropped[result.tool] += 1
            continue
        fix = _fix(result, patch, lines, where == "inline") if patch is not None and lines is not None else None
        code = code_of(patch, result.start_line, result.end_line) if result.start_line and result.end_line else ""
        finding = finding_of(result, result.path or "", code, fix)
        if finding.fingerprint in seen:
            duplicates += 1
            continue
        seen.add(finding.fingerprint)
        (inline if where == "inline" else summary).append(finding)
    inline, moved, over_cap = _capped(inline, max_inline_per_tool)
    return Placement(tuple(inline), tuple(summary + moved), dict(dropped), dict(over_cap), duplicates)


def _capped(inline: list[AnalyzerFinding], cap: int | None) -> tuple[list[AnalyzerFinding], list[AnalyzerFinding],
                                                                      Counter[str]]:
    """The first `cap` of each tool by severity (blocking first, then in the given order) stay inline."""
    if cap is None:
        return inline, [], Counter()
    ranked = sorted(range(len(inline)), key=lambda i: -SEVERITY_ORDER.index(inline[i].severity))
    taken: Counter[str] = Counter()
    keep: set[int] = set()
    for index in ranked:
        if taken[inline[index].tool] < cap:
            taken[inline[index].tool] += 1
            keep.add(index)
    over_cap = Counter(f.tool for i, f in enumerate(inline) if i not in keep)
    moved = [f for i, f in enumerate(inline) if i not in keep]
    return [f for i, f in enumerate(inline) if i in keep], moved, over_cap
