"""A SARIF fix as a GitHub suggestion (pure): the replacement text for whole lines.

A suggestion replaces the lines an inline comment covers, while a SARIF fix edits regions by line
and column (ruff's "remove unused import" deletes line 3 up to column 1 of line 4; ShellCheck's
quoting inserts `"` at two columns of one line). So the lines a fix touches are rebuilt from their
text, which the pull request's diff holds for the lines it shows, and the edits applied to them.
Where a touched line's text is unknown, or edits overlap, or the result would join a line to the
next, there is no suggestion: a wrong one-click change is worse than none.

Columns are counted in characters (code points); tools that count UTF-16 units (CodeQL's default)
agree on every line without characters outside the Basic Multilingual Plane.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.analyzers.model import Edit


@dataclass(frozen=True, slots=True)
class Fix:
    start_line: int
    end_line: int
    lines: tuple[str, ...]  # the new lines in place of start..end; none: the lines are deleted

    @property
    def replacement(self) -> str:
        """The suggestion's body: the new lines joined (one empty line and a deletion differ in
        `lines`, not here)."""
        return "\n".join(self.lines)


def _last_line(edit: Edit) -> int:
    """The last line whose text or newline the edit changes."""
    if edit.end_column == 1 and edit.end_line > edit.start_line:
        return edit.end_line - 1  # up to the start of end_line: the line before, with its newline
    return edit.end_line


def line_fix(edits: Sequence[Edit], lines: Mapping[int, str]) -> Fix | None:
    """The whole-line replacement the edits make, given the text of the lines they touch."""
    if not edits:
        return None
    first = min(edit.start_line for edit in edits)
    last = max(_last_line(edit) for edit in edits)
    if any(number not in lines for number in range(first, last + 1)):
        return None
    texts = [lines[number] for number in range(first, last + 1)]
    starts = [0]
    for text in texts:
        starts.append(starts[-1] + len(text) + 1)
    block = "\n".join(texts) + "\n"

    def offset(line: int, column: int | None, *, end: bool) -> int:
        if line > last:  # the start of the line after the block (end_column 1)
            return len(block)
        text = texts[line - first]
        if column is None:
            return starts[line - first] + (len(text) if end else 0)
        return starts[line - first] + min(column - 1, len(text))

    spans = sorted((offset(e.start_line, e.start_column, end=False), offset(e.end_line, e.end_column, end=True),
                    e.text) for e in edits)
    for (_, end, _), (start, _, _) in zip(spans, spans[1:], strict=False):
        if start < end:
            return None  # overlapping edits: no single reading of them
    for start, end, text in reversed(spans):
        if end < start:
            return None
        block = block[:start] + text + block[end:]
    if block and not block.endswith("\n"):
        return None  # the fix joins the last line to the next one, which a suggestion cannot say
    return Fix(first, last, tuple(block[:-1].split("\n")) if block else ())


def widen(fix: Fix, start: int, end: int, lines: Mapping[int, str]) -> Fix | None:
    """The fix over lines start..end as well, the lines it leaves alone kept as they are."""
    first, last = min(start, fix.start_line), max(end, fix.end_line)
    if any(number not in lines for number in (*range(first, fix.start_line), *range(fix.end_line + 1, last + 1))):
        return None
    before = tuple(lines[n] for n in range(first, fix.start_line))
    after = tuple(lines[n] for n in range(fix.end_line + 1, last + 1))
    return Fix(first, last, before + fix.lines + after)
