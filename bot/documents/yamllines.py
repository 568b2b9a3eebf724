"""Positions as editors and GitHub count lines: libyaml's marks, moved where they need to be.

libyaml reads YAML 1.1 line breaks: besides `\\n` and `\\r\\n`, a lone `\\r`, NEL (U+0085), LS
(U+2028) and PS (U+2029) each start a new line for it, and it places an error at the end of the
stream on a line after the last one. Editors, annotations and `wc -l` count `\\n` alone, so a mark
is turned back into a character offset (with libyaml's breaks) and that offset into a line and
column (with `\\n`), and a place past the end is put at the end of the last line. Files without
those characters, nearly all, only pay for one search.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable

Place = tuple[int, int]
_YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_ODD_BREAK = re.compile("\r(?!\n)|[\x85\u2028\u2029]")


def _starts(text: str, breaks: re.Pattern[str]) -> list[int]:
    return [0, *(match.end() for match in breaks.finditer(text))]


def line_mapper(text: str) -> Callable[[int, int], Place] | None:
    """A function from libyaml's 1-based (line, column) to the editor's, or None when they agree
    everywhere (but past the end: see Placer)."""
    if not _ODD_BREAK.search(text):
        return None
    yaml_starts, lines = _starts(text, _YAML_BREAK), _starts(text, re.compile("\n"))

    def remap(line: int, column: int) -> Place:
        offset = yaml_starts[min(line, len(yaml_starts)) - 1] + column - 1
        found = bisect_right(lines, offset) - 1
        return found + 1, offset - lines[found] + 1

    return remap


class Placer:
    """Turns libyaml's (line, column) into the editor's: remapped when the text has odd breaks,
    and moved from past the last line (libyaml's end of stream) to the end of the last line."""

    def __init__(self, text: str) -> None:
        self.remap = line_mapper(text)
        breaks = text.count("\n")
        ends_with_break = text.endswith("\n")
        self.last_line = max(1, breaks + (0 if ends_with_break else 1))
        body = text[:-1] if ends_with_break else text
        self.end_column = len(body) - (body.rfind("\n") + 1) + 1

    def needed(self, lines: Iterable[int]) -> bool:
        """Whether any of these places must move; without odd breaks only one past the end does."""
        return self.remap is not None or any(line > self.last_line for line in lines)

    def __call__(self, line: int, column: int) -> Place:
        if self.remap is not None:
            line, column = self.remap(line, column)
        return (self.last_line, self.end_column) if line > self.last_line else (line, column)
