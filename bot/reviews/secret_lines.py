"""The lines a secret scanner flagged, and what no finding may do with them (pure).

A secret found on a line is never quoted or stored (docs/analyzers.md "Built-in analyzers"), and
that holds for every finding about the line, whatever its source: another tool's fix (ruff and
ShellCheck rewrite the whole line into a suggestion), a SARIF upload's, the model's. So a finding
that touches a flagged line gets no suggestion, and the code kept of a finding (the ledger's `code`,
which its fingerprint is made from) leaves the flagged lines out: `blanked` gives the diff with
their text emptied, which `bot.reviews.fingerprints.code_of` skips as it skips blank lines. The
scanner's own finding keeps its fingerprint made without the value (bot/analyzers/builtin/secrets.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from bot.reviews.diff import FilePatch
from bot.reviews.findings import Finding


@dataclass(frozen=True)
class SecretLines:
    lines: frozenset[tuple[str, int]] = frozenset()  # (path, new-file line)

    def __bool__(self) -> bool:
        return bool(self.lines)

    def touches(self, path: str | None, start: int | None, end: int | None) -> bool:
        """Whether lines start..end of `path` hold a flagged line."""
        if not self.lines or path is None or start is None:
            return False
        return any(p == path and start <= n <= (end or start) for p, n in self.lines)

    def blanked(self, patches: Mapping[str, FilePatch]) -> dict[str, FilePatch]:
        """The diff with each flagged line's text emptied (its place in the diff kept)."""
        if not self.lines:
            return dict(patches)
        paths = {p for p, _ in self.lines}
        return {path: _blanked(path, patch, self.lines) if path in paths else patch for path, patch in patches.items()}

    def without_fixes(self, findings: Iterable[Finding]) -> list[Finding]:
        """The findings, those that touch a flagged line without their suggested fix."""
        return [replace(f, suggested_fix=None) if f.suggested_fix is not None and self.touches(f.path, f.start_line,
                                                                                                 f.end_line) else f
                for f in findings]


def _blanked(path: str, patch: FilePatch, lines: frozenset[tuple[str, int]]) -> FilePatch:
    hunks = tuple(replace(hunk, lines=tuple(replace(line, text="") if (path, line.new_line) in lines else line
                                              for line in hunk.lines)) for hunk in patch.hunks)
    return replace(patch, hunks=hunks)


NO_SECRETS = SecretLines()
