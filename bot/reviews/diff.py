"""Unified-diff patches as GitHub gives them (`pulls/{n}/files`, `compare`): hunks and their lines.

Two consumers need the same reading of a patch: the request shows the model each hunk with its
new-file line numbers (models cite numbers they can see far more reliably than ones they must
count), and placement asks whether a finding's lines can carry an inline review comment. GitHub
accepts a comment on the RIGHT side only on a line inside a hunk's new-file range, and a multi-line
comment only when both ends lie in the same hunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: str  # " " context, "+" added, "-" removed
    new_line: int | None  # the line number in the new file; None for a removed line
    text: str


@dataclass(frozen=True, slots=True)
class Hunk:
    header: str
    new_start: int
    new_count: int
    lines: tuple[DiffLine, ...]
    old_start: int = 0  # the hunk's range in the old file: lines are mapped across a push with it
    old_count: int = 0

    def covers(self, start: int, end: int) -> bool:
        """Whether new-file lines start..end all lie in this hunk (RIGHT side)."""
        return self.new_start <= start <= end < self.new_start + self.new_count


@dataclass(frozen=True, slots=True)
class FilePatch:
    path: str
    status: str  # added, removed, modified, renamed, copied, changed, unchanged
    hunks: tuple[Hunk, ...]
    has_patch: bool  # False: GitHub gave no patch (a binary file, or one too large to diff)


def parse_patch(patch: str) -> tuple[Hunk, ...]:
    """Hunks of one file's patch; text before the first hunk header (git headers) is skipped."""
    hunks: list[Hunk] = []
    header: re.Match[str] | None = None
    lines: list[DiffLine] = []
    new_line = 0

    def close() -> None:
        if header is not None:
            start, count = int(header.group(3)), int(header.group(4) or "1")
            hunks.append(Hunk(header.group(0), start, count, tuple(lines), int(header.group(1)),
                              int(header.group(2) or "1")))

    for raw in patch.splitlines():
        match = _HUNK_HEADER.match(raw)
        if match:
            close()
            header, lines, new_line = match, [], int(match.group(3))
            continue
        if header is None or raw.startswith("\\"):  # "\ No newline at end of file"
            continue
        kind, text = (raw[:1] or " "), raw[1:]
        if kind == "-":
            lines.append(DiffLine("-", None, text))
        elif kind in " +":
            lines.append(DiffLine(kind, new_line, text))
            new_line += 1
    close()
    return tuple(hunks)


def read_patches(entries: Iterable[Mapping]) -> dict[str, FilePatch]:
    """GitHub file entries (`filename`, `status`, `patch`) by path; malformed entries are skipped."""
    patches: dict[str, FilePatch] = {}
    for entry in entries:
        path = entry.get("filename") if isinstance(entry, Mapping) else None
        if not isinstance(path, str) or not path:
            continue
        patch = entry.get("patch")
        given = entry.get("status")
        status = given if isinstance(given, str) else "modified"
        text = patch if isinstance(patch, str) else ""
        patches[path] = FilePatch(path, status, parse_patch(text), isinstance(patch, str))
    return patches


def placeable(patch: FilePatch | None, start: int, end: int) -> bool:
    """Whether an inline comment on lines start..end (RIGHT side) is one GitHub will accept."""
    return patch is not None and any(h.covers(start, end) for h in patch.hunks)


def in_diff(patch: FilePatch | None, start: int | None, end: int | None) -> bool:
    """Whether a finding on new-file lines start..end is about the change: one of its lines is a
    line the diff shows (added, or context in a hunk). A finding on a whole file (no lines) is,
    when the file is in the diff. Only such findings decide a check run or an approval."""
    if patch is None:
        return False
    if start is None or end is None:
        return True
    return any(h.new_count and h.new_start <= end and start < h.new_start + h.new_count for h in patch.hunks)


def render_hunk(hunk: Hunk) -> list[str]:
    """A hunk with new-file numbers in a left margin: `  12 +added`, `     -removed`."""
    out = [hunk.header]
    for line in hunk.lines:
        number = "" if line.new_line is None else str(line.new_line)
        out.append(f"{number:>6} {line.kind}{line.text}")
    return out
