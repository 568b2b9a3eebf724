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
from collections.abc import Callable

Place = tuple[int, int]
_YAML_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
_ODD_BREAK = re.compile("\r(?!\n)|[\x85\u2028\u2029]")


def _starts(text: str, breaks: re.Pattern[str]) -> list[int]:
    return [0, *(match.end() for match in breaks.finditer(text))]


def line_mapper(text: str) -> Callable[[int, int], Place] | None:
    """A function from libyaml's 1-based (line, column) to the editor's, or None when they agree
    everywhere but past the end (see `within`)."""
    if not _ODD_BREAK.search(text):
        return None
    yaml_starts, lines = _starts(text, _YAML_BREAK), _starts(text, re.compile("\n"))

    def remap(line: int, column: int) -> Place:
        offset = yaml_starts[min(line, len(yaml_starts)) - 1] + column - 1
        found = bisect_right(lines, offset) - 1
        return found + 1, offset - lines[found] + 1

    return remap


def within(text: str, line: int, column: int) -> Place:
    """A place past the last line (libyaml's end of stream), moved to the end of the last line."""
    lines = text.split("\n")
    if len(lines) > 1 and not lines[-1]:  # a final `\n` ends the last line; it starts none
        lines.pop()
    if line <= len(lines):
        return line, column
    return len(lines), len(lines[-1]) + 1
