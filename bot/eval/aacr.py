"""AACR-Bench (github.com/alibaba/aacr-bench, Apache-2.0) read into `reviewer eval` cases: the pure part
of `reviewer eval import aacr-bench` (bot/commands/eval_import.py reads the file and git).

The benchmark's `dataset/positive_samples.json` is a JSON array, one object a pull request:
`githubPrUrl`, `source_commit` (the base branch's commit), `target_commit` (the pull request's
head), `project_main_language`, `category` (of the change: "Bug Fix", …), `change_line_count`, and
`comments`: the findings a good review makes, each `{note, path, side ("right": lines of the head;
"left": lines of the base), from_line, to_line, category ("Code Defect", "Security Vulnerability",
"Performance", "Maintainability and Readability"), context ("Diff Level", "File Level", "Repo
Level"), is_ai_comment, source_model}`. `dataset/negative_samples.json` has the same shape and
holds the comments its annotators rejected.

A pull request becomes a case: head `target_commit`, base the merge base of `source_commit` and
`target_commit` (as GitHub diffs a pull request); each comment a must-find item whose `tags` keep
its category, context level and origin (`category:code-defect`, `context:diff`, `origin:human` or
`origin:model`); comments at the same lines of the same file collapse into one item with several
descriptions (and the union of their tags). What a profile keeps is PROFILES' to say.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.documents.pointers import human_pointer
from bot.shapes import AnyValue, Arr, Bool, Int, Issue, Obj, Str, validate

COMMIT = Str(pattern=r"^[0-9a-f]{40}$", pattern_hint="a full commit id: 40 lowercase hexadecimal digits")
PR_URL = re.compile(r"^https://github\.com/([A-Za-z0-9][A-Za-z0-9_.-]*)/([A-Za-z0-9_.-]+)/pull/([0-9]+)/?$")

COMMENT = Obj(
    properties={
        "note": Str(min_length=1),
        "path": Str(min_length=1),
        "side": Str(enum=("left", "right")),
        "from_line": Int(minimum=1),
        "to_line": Int(minimum=1),
        "category": Str(min_length=1),
        "context": Str(min_length=1),
        "is_ai_comment": Bool(),
        "source_model": Str(),
    },
    required=("note", "path", "side", "from_line", "to_line", "category", "context", "is_ai_comment"),
    values=AnyValue(),  # a later version's new fields are not errors
)

RECORD = Obj(
    properties={
        "githubPrUrl": Str(pattern=PR_URL.pattern, pattern_hint="https://github.com/OWNER/NAME/pull/NUMBER"),
        "source_commit": COMMIT,
        "target_commit": COMMIT,
        "project_main_language": Str(min_length=1),
        "category": Str(),
        "change_line_count": Int(minimum=0),
        "comments": Arr(items=COMMENT),
    },
    required=("githubPrUrl", "source_commit", "target_commit", "comments"),
    values=AnyValue(),
)

BENCHMARK = Arr(items=RECORD, min_items=1)

PROFILES = {
    "strict": "only what a person wrote at Diff level; a pull request left with nothing is left out",
    "full": "every comment",
    "smoke": "every comment of a handful of pull requests: per language, the smallest one available",
}


@dataclass(frozen=True, slots=True)
class Comment:
    note: str
    path: str
    side: str
    lines: tuple[int, int]
    category: str
    context: str
    human: bool
    reversed: bool = False  # written as from_line > to_line (the lines are then taken in order)

    @property
    def tags(self) -> tuple[str, ...]:
        return (f"category:{slug(self.category)}", f"context:{context_level(self.context)}",
                f"origin:{'human' if self.human else 'model'}")


@dataclass(frozen=True, slots=True)
class Record:
    index: int  # its place in the file
    owner: str
    name: str
    number: int
    source: str
    target: str
    language: str
    change: str  # the pull request's category ("Bug Fix")
    change_lines: int
    comments: tuple[Comment, ...]

    @property
    def id(self) -> str:
        return f"{self.owner}-{self.name}-{self.number}"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def tags(self) -> tuple[str, ...]:
        out = [f"language:{slug(self.language)}"] if self.language else []
        return tuple(out + ([f"change:{slug(self.change)}"] if self.change else []))


@dataclass(frozen=True, slots=True)
class Item:
    """A must-find item (or must-not place) of a case, at lines of the head."""

    path: str
    lines: tuple[int, int]
    descriptions: tuple[str, ...]
    tags: tuple[str, ...] = field(default=())


def slug(text: str) -> str:
    """`Code Defect` → `code-defect`, `C++` → `c++`: a tag's value."""
    return re.sub(r"[^a-z0-9+#.]+", "-", text.lower()).strip("-") or "none"


def context_level(text: str) -> str:
    """`Diff Level` → `diff`."""
    return slug(re.sub(r"\s*level\s*$", "", text, flags=re.IGNORECASE))


def read_benchmark(data: Any) -> tuple[list[Record], list[Issue]]:
    """The records of a parsed benchmark file, or every problem with its place (a JSON pointer)."""
    issues = validate(BENCHMARK, data)
    if issues:
        return [], issues
    records = [_record(i, r) for i, r in enumerate(data)]
    seen: dict[str, int] = {}
    for record in records:
        first = seen.setdefault(record.id, record.index)
        if first != record.index:
            pointer = f"/{record.index}/githubPrUrl"
            issues.append(Issue(pointer, "duplicate-id", f"{human_pointer(pointer)}: the pull request {record.id} "
                                                         f"is already at [{first}]"))
    return ([] if issues else records), issues


def _record(index: int, data: dict) -> Record:
    match = PR_URL.match(data["githubPrUrl"])
    assert match is not None  # the shape's pattern
    return Record(index, match[1], match[2], int(match[3]), data["source_commit"], data["target_commit"],
                  data.get("project_main_language", ""), data.get("category", ""), data.get("change_line_count", 0),
                  tuple(_comment(c) for c in data["comments"]))


MAX_NOTE = 4000  # a description's bound in a corpus (bot/config/corpus_schema.py)
MAX_NOTES = 50  # descriptions of one item, likewise


def _comment(data: dict) -> Comment:
    first, last = data["from_line"], data["to_line"]
    note = data["note"] if len(data["note"]) <= MAX_NOTE else data["note"][:MAX_NOTE - 1] + "…"
    return Comment(note, data["path"].removeprefix("./"), data["side"], (min(first, last), max(first, last)),
                   data["category"], data["context"], not data["is_ai_comment"], first > last)


def in_profile(comment: Comment, profile: str) -> bool:
    return comment.human and context_level(comment.context) == "diff" if profile == "strict" else True


def smoke_pick(records: Sequence[Record]) -> list[Record]:
    """Per language, the record with the fewest changed lines (then the first id): a run of a few
    reviews that still crosses every language the benchmark has."""
    best: dict[str, Record] = {}
    for record in records:
        kept = best.get(record.language)
        if kept is None or (record.change_lines, record.id) < (kept.change_lines, kept.id):
            best[record.language] = record
    chosen = {r.id for r in best.values()}
    return [r for r in records if r.id in chosen]


Hunk = tuple[int, int, int, int]  # old start, old count, new start, new count (`git diff -U0`'s header)


def map_left(lines: tuple[int, int], hunks: Sequence[Hunk], head_length: int) -> tuple[int, int]:
    """Lines of the base mapped to the head through a zero-context diff: a line the change left
    moves with the lines added and removed above it; a line it removed or replaced maps to what
    replaced it, or, removed outright, to the two lines around the gap (as a corpus pins a
    deletion). Clamped to the head's length."""
    first, last = (_map_line(n, hunks) for n in lines)
    start, end = min(first[0], last[0]), max(first[1], last[1])
    top = max(head_length, 1)
    return min(max(start, 1), top), min(max(end, 1), top)


def _map_line(line: int, hunks: Sequence[Hunk]) -> tuple[int, int]:
    shift = 0
    for old_start, old_count, new_start, new_count in hunks:
        if old_count and old_start <= line < old_start + old_count:
            return (new_start, new_start + new_count - 1) if new_count else (new_start, new_start + 1)
        ends_before = old_start + old_count - 1 < line if old_count else old_start < line
        if not ends_before:
            break
        shift += new_count - old_count
    return line + shift, line + shift


def collapse(items: Iterable[Item]) -> list[Item]:
    """Items at the same lines of the same file as one, its descriptions in order (each once, the
    first MAX_NOTES), its tags the union; sorted by file and lines."""
    grouped: dict[tuple[str, tuple[int, int]], tuple[list[str], list[str]]] = {}
    for item in items:
        notes, tags = grouped.setdefault((item.path, item.lines), ([], []))
        notes.extend(d for d in item.descriptions if d not in notes)
        tags.extend(t for t in item.tags if t not in tags)
    return [Item(path, lines, tuple(notes[:MAX_NOTES]), tuple(sorted(tags)))
            for (path, lines), (notes, tags) in sorted(grouped.items())]


def apart_from(places: Iterable[Item], items: Sequence[Item]) -> list[Item]:
    """The places that overlap none of `items`: a rejected comment's lines are a must-not place only
    where no accepted finding lies."""
    def overlaps(a: Item, b: Item) -> bool:
        return a.path == b.path and a.lines[0] <= b.lines[1] and b.lines[0] <= a.lines[1]
    return [p for p in places if not any(overlaps(p, i) for i in items)]
