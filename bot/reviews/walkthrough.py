"""The walkthrough: one line per changed file saying what changed, from the review's own model call.

The model's answer may carry, beside `findings`, `walkthrough: [{"path", "summary"}]` (the shape
`SCHEMA` gives, `PROMPT` asks for). It is untrusted like the rest of the answer: only files of the
review count, the first line about a file wins, a summary is one line of at most
`MAX_SUMMARY_CHARS`, without control characters, and never mentions anyone. Anything else is left
out with a remark, and a missing or broken walkthrough never costs the findings. The summary
comment opens with `render`'s lines, in the plan's file order; the admin file's
`reviews.walkthrough: false` turns it off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.reviews.followup import neutralise_mentions

MAX_SUMMARY_CHARS = 200
MAX_REMARKS = 3
SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["path", "summary"],
        "properties": {"path": {"type": "string", "minLength": 1}, "summary": {"type": "string", "minLength": 1}},
    },
}
PROMPT = ('- walkthrough (optional, beside "findings"): [{"path": str, "summary": str}], one entry per file of the '
          "diff, saying in one short line what changed in it (not what is wrong with it).")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+")


@dataclass(frozen=True)
class FileLine:
    path: str
    summary: str


@dataclass(frozen=True)
class Walkthrough:
    lines: tuple[FileLine, ...] = ()
    remarks: tuple[str, ...] = ()  # what was left out and why, for the check run's notes


def read_walkthrough(value: Any, files: Sequence[str]) -> Walkthrough:
    """The walkthrough of an answer's `walkthrough` value (None: there was none) for a review of `files`."""
    if value is None:
        return Walkthrough()
    if not isinstance(value, list):
        return Walkthrough((), ("walkthrough: not a list; left out",))
    known = set(files)
    found: dict[str, str] = {}
    remarks: list[str] = []
    for index, entry in enumerate(value):
        problem = _problem(entry, known, found)
        if problem is not None:
            if len(remarks) < MAX_REMARKS:
                remarks.append(f"walkthrough[{index}]: {problem}; left out")
            continue
        found[_path(entry["path"])] = _one_line(entry["summary"])
    lines = tuple(FileLine(path, found[path]) for path in files if path in found)
    return Walkthrough(lines, tuple(remarks))


def _path(text: str) -> str:
    text = text.strip()
    return text[2:] if text.startswith("./") else text


def _problem(entry: Any, known: set[str], found: dict[str, str]) -> str | None:
    if not isinstance(entry, dict):
        return "not an object"
    path, summary = entry.get("path"), entry.get("summary")
    if not isinstance(path, str) or _path(path) not in known:
        return "path: not a file of this review"
    if not isinstance(summary, str) or not _one_line(summary):
        return "summary: a non-empty string is required"
    if _path(path) in found:
        return f"{_path(path)} is described twice; the first is kept"
    return None


def _one_line(text: str) -> str:
    line = " ".join(_CONTROL.sub(" ", text).split())
    return line if len(line) <= MAX_SUMMARY_CHARS else line[: MAX_SUMMARY_CHARS - 1].rstrip() + "…"


def render(walkthrough: Walkthrough) -> str:
    """The summary comment's opening lines ("" when there is nothing to say)."""
    if not walkthrough.lines:
        return ""
    items = "\n".join(f"- {_code(line.path)} — {neutralise_mentions(line.summary)}" for line in walkthrough.lines)
    return f"**What changed**\n\n{items}"


def _code(text: str) -> str:
    """A code span no backtick run inside can close (CommonMark: a longer fence, padded)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}" if longest else f"`{text}`"
