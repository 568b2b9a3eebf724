"""The repository index's part of a review: from patches to changed lines, and pieces to prompt text.

The index (bot/index) knows nothing of patches or prompts; this module is the seam between the
engine's view of a pull request (GitHub's per-file patches, the head's texts) and the index's
(changed lines, pieces of context).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.index.retrieve import ChangedFile, Retrieval
from bot.reviews.diff import FilePatch
from bot.reviews.markdown import fence


def changed_files(patches: Mapping[str, FilePatch], head_texts: Mapping[str, str]) -> list[ChangedFile]:
    """What retrieval needs of each changed file: its head text and its added and touched lines.

    A removed line touches the new-file line that follows it, so a function whose lines were only
    deleted still counts as changed."""
    out = []
    for path, patch in patches.items():
        added: list[tuple[int, str]] = []
        touched: set[int] = set()
        for hunk in patch.hunks:
            next_line = hunk.new_start
            for line in hunk.lines:
                if line.kind == "+" and line.new_line is not None:
                    added.append((line.new_line, line.text))
                    touched.add(line.new_line)
                elif line.kind == "-":
                    touched.add(max(1, next_line))
                if line.new_line is not None:
                    next_line = line.new_line + 1
        text = None if patch.status == "removed" else head_texts.get(path)
        out.append(ChangedFile(path, text, tuple(added), tuple(sorted(touched))))
    return out


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _inline(text: str) -> str:
    """A path, name or reason on the heading line: control characters (a newline in a file name)
    shown escaped, so repository content cannot start a section of its own outside its fence."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def index_section(retrieval: Retrieval | None) -> str:
    """The prompt's section: what the index added, each piece labelled `path:start-end` and why."""
    if retrieval is None or not retrieval.pieces:
        return ""
    parts = [f"## Code the change depends on (from the repository index)\n{retrieval.summary()}. "
             "These are unchanged files of the default branch, for reference: report findings on the diff only."]
    for piece in retrieval.pieces:
        numbered = "\n".join(f"{piece.start + i:>6} {text}" for i, text in enumerate(piece.text.splitlines()))
        heading = f"#### {_inline(piece.label)} — {piece.kind} `{_inline(piece.symbol)}`: {_inline(piece.reason)}"
        parts.append(f"{heading}\n{fence(numbered)}")
    return "\n\n".join(parts)
