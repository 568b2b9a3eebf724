"""Rust's own rules: the constants, statics and functions ctags misses (bench/context_truth.py says
the rules)."""

from __future__ import annotations

import re
from collections.abc import Callable

from truth.model import Tag
from truth.text import extent

RUST_CONST = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?([A-Za-z_]\w*)\s*:")
RUST_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+\"\w+\")\s+)*fn\s+(\w+)")


def extra_tags(path: str, lines: list[str], found: dict, code: Callable[[str], list[str]]) -> None:
    """Adds to `found` each `const`, `static` and `fn` of the file that ctags left out
    (`code(path)`: the file's lines with comments and strings blanked)."""
    for number, text in enumerate(lines, 1):
        match = RUST_CONST.match(text) or RUST_FN.match(text)
        if match and not any(k[0] == path and k[1] == number for k in found):
            kind = "function" if match.re is RUST_FN else "variable"
            found[(path, number, match.group(1))] = Tag(match.group(1), path, number,
                                                        extent(code(path), number, "rust", kind), kind, "")
