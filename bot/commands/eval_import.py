"""`reviewer eval import aacr-bench FILE --repos DIR --out CORPUS [--profile strict|full|smoke]
[--negatives FILE]`: a public benchmark's pull requests written as a `reviewer eval` corpus
(docs/eval.md "A public benchmark"; the format and the choices are bot/eval/aacr.py's).

Each repository is a clone at `DIR/<owner>/<name>` (or `DIR/<owner>/<name>.git`). For each pull
request: its commits are looked up there (a case whose repository or commits are missing is
skipped and listed, with the command that would fetch what it lacks); the merge base of
`source_commit` and `target_commit` is its base, `target_commit` its head; right-side comments are
kept where their lines lie in the head's file; left-side ones (lines of the base) are mapped
through the change's zero-context diff, or skipped when their file is not in the base or is gone
at the head; everything left out is counted. `CORPUS/corpus.yaml` is written, checked by the
corpus's own loader first.

Exit 0 when the corpus is written; 1 when FILE (or --negatives) is not in the benchmark's format
(each problem with its place: `FILE: [3].comments[2].from_line: type: …`); 2 on a usage error,
an unreadable file, or when no case could be written.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.eval import aacr
from bot.eval.corpus import CORPUS_FILE, load_corpus
from bot.eval.corpus_text import render
from bot.plan import git

MAX_FILE_BYTES = 256 * 1024 * 1024  # the benchmark's file is about 1 MB


class Stop(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Counts:
    """What was read, kept and left out, for the summary and the corpus's header."""

    comments: int = 0
    in_profile: int = 0
    items: int = 0
    left_mapped: int = 0
    left_out: Counter = field(default_factory=Counter)  # reason → comments
    reversed: int = 0
    collapsed: int = 0
    places: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (case id, why)


def _read(path: str, what: str) -> list[aacr.Record]:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise Stop(2, f"cannot read the {what} {path}: {error.strerror or error}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise Stop(2, f"the {what} {path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    try:
        data = parse_json(raw)
    except JsonBodyError as error:
        raise Stop(2, f"the {what} {path} is not JSON: {error.message}") from None
    records, issues = aacr.read_benchmark(data)
    if issues:
        lines = "\n".join(f"{path}: {i.code}: {i.message}" for i in issues[:50])
        more = f"\n… and {len(issues) - 50} more" if len(issues) > 50 else ""
        raise Stop(1, f"{lines}{more}\nreviewer eval import: the {what} {path} is not in AACR-Bench's format "
                      f"({len(issues)} error(s))")
    return records


def repository(repos: str, record: aacr.Record) -> str | None:
    for candidate in (os.path.join(repos, record.owner, record.name),
                      os.path.join(repos, record.owner, record.name + ".git")):
        if os.path.isdir(candidate):
            try:
                git.git(candidate, "rev-parse", "--git-dir")
                return candidate
            except git.GitError:
                continue
    return None


def _missing_commit(repo: str, record: aacr.Record) -> str | None:
    for commit in (record.source, record.target):
        try:
            git.git(repo, "cat-file", "-e", f"{commit}^{{commit}}")
        except git.GitError:
            return commit
    return None


def _unavailable(repos: str, record: aacr.Record) -> tuple[str | None, str]:
    """(the repository, None) or (None, why the case cannot be made, with what would fetch it)."""
    repo = repository(repos, record)
    if repo is None:
        place = os.path.join(repos, record.owner, record.name)
        return None, f"no repository at {place} (git clone https://github.com/{record.full_name}.git {place})"
    missing = _missing_commit(repo, record)
    if missing is not None:
        return None, (f"{repo} has no commit {missing} (git -C {repo} fetch origin {missing} "
                      f"pull/{record.number}/head)")
    return repo, ""


@dataclass(frozen=True)
class Change:
    """What the case's change did, as far as its comments need: the trees, renames, hunks."""

    repo: str
    base: str
    head: str
    base_tree: frozenset[str]
    head_tree: frozenset[str]
    renamed: dict[str, str | None]  # a base path the change moved (its head path) or removed (None)

    def head_length(self, path: str) -> int:
        """Lines of the file at the head, a last line without a newline counted."""
        data = git.read_blob(self.repo, self.head, path)
        return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)

    def hunks(self, old: str, new: str) -> list[aacr.Hunk]:
        out = git.git(self.repo, "diff-tree", "-r", "-p", "-U0", "--inter-hunk-context=0", "--no-color",
                      "--no-ext-diff", "-M", self.base, self.head, "--", *dict.fromkeys((old, new)))
        return [_hunk(line) for line in out.decode("utf-8", errors="replace").splitlines() if line.startswith("@@ ")]


def _hunk(header: str) -> aacr.Hunk:
    old, new = header.split(" ")[1:3]
    old_start, _, old_count = old[1:].partition(",")
    new_start, _, new_count = new[1:].partition(",")
    return int(old_start), int(old_count or 1), int(new_start), int(new_count or 1)


def change_of(repo: str, record: aacr.Record) -> Change:
    base = git.merge_base(repo, record.source, record.target)
    renamed: dict[str, str | None] = {}
    tokens = git.git(repo, "diff-tree", "-r", "-z", "-M", "--name-status", base, record.target).split(b"\0")
    index = 0
    while index < len(tokens) and tokens[index]:
        status = tokens[index][:1]
        if status == b"R":
            renamed[tokens[index + 1].decode("utf-8", "surrogateescape")] = tokens[index + 2].decode("utf-8", "surrogateescape")
            index += 3
            continue
        if status == b"C":
            index += 3
            continue
        if status == b"D":
            renamed[tokens[index + 1].decode("utf-8", "surrogateescape")] = None
        index += 2
    return Change(repo, base, record.target, git.list_tree(repo, base), git.list_tree(repo, record.target), renamed)


def _placed(change: Change, comment: aacr.Comment, counts: Counts) -> aacr.Item | None:
    """The comment at lines of the head, or None (counted) when it cannot be."""
    if comment.side == "right":
        if comment.path not in change.head_tree:
            counts.left_out["right-side, its file is not in the head"] += 1
            return None
        if comment.lines[1] > change.head_length(comment.path):
            counts.left_out["right-side, past the end of its file at the head"] += 1
            return None
        return aacr.Item(comment.path, comment.lines, (comment.note,), comment.tags)
    if comment.path not in change.base_tree:
        counts.left_out["left-side, its file is not in the base"] += 1
        return None
    new = change.renamed.get(comment.path, comment.path)
    if new is None:
        counts.left_out["left-side, its file is removed at the head"] += 1
        return None
    lines = aacr.map_left(comment.lines, change.hunks(comment.path, new), change.head_length(new))
    counts.left_mapped += 1
    return aacr.Item(new, lines, (comment.note,), comment.tags)


def _items(change: Change, comments: Sequence[aacr.Comment], counts: Counts) -> list[aacr.Item]:
    placed = [p for p in (_placed(change, c, counts) for c in comments) if p is not None]
    collapsed = aacr.collapse(placed)
    counts.collapsed += len(placed) - len(collapsed)
    return collapsed


def _place_json(item: aacr.Item, rejected: bool = False) -> dict:
    about = [f"a comment the benchmark's annotators rejected: {d}" for d in item.descriptions] if rejected \
        else list(item.descriptions)
    return {"path": item.path, "lines": list(item.lines), "about": about if len(about) > 1 else about[0],
            "tags": list(item.tags)}


def _available(records: Sequence[aacr.Record], args: argparse.Namespace,
               counts: Counts) -> list[tuple[aacr.Record, str]]:
    """The records whose repository and commits are there (with the repository), the profile's
    choice of them for smoke; the others listed as skipped, with why."""
    available: list[tuple[aacr.Record, str]] = []
    for record in records:
        repo, why = _unavailable(args.repos, record)
        if repo is None:
            counts.skipped.append((record.id, why))
        else:
            available.append((record, repo))
    if args.profile == "smoke":
        chosen = {r.id for r in aacr.smoke_pick([r for r, _ in available])}
        available = [(r, repo) for r, repo in available if r.id in chosen]
    return available


def _case(record: aacr.Record, repo: str, negatives: dict[str, aacr.Record], args: argparse.Namespace,
          counts: Counts) -> dict | None:
    """The case of one pull request, or None (listed as skipped, with why)."""
    counts.comments += len(record.comments)
    counts.reversed += sum(1 for c in record.comments if c.reversed)
    kept = [c for c in record.comments if aacr.in_profile(c, args.profile)]
    counts.in_profile += len(kept)
    if not kept:
        counts.skipped.append((record.id, f"no comment in the {args.profile} profile"))
        return None
    try:
        change = change_of(repo, record)
    except git.GitError as error:
        counts.skipped.append((record.id, str(error)))
        return None
    items = _items(change, kept, counts)
    if not items:
        counts.skipped.append((record.id, "none of its comments could be placed at the head"))
        return None
    places: list[aacr.Item] = []
    if record.id in negatives:
        everything = _items(change, record.comments, Counts())  # every accepted comment, whatever the profile
        places = aacr.apart_from(_items(change, negatives[record.id].comments, Counts()), everything)
    counts.items += len(items)
    counts.places += len(places)
    return {"id": record.id, "repo": os.path.relpath(repo, args.out), "base": change.base, "head": record.target,
            "note": f"{record.language}, {record.change}".strip(", "), "tags": list(record.tags),
            "must_find": [_place_json(i) for i in items], "must_not": [_place_json(p, rejected=True) for p in places]}


def make_cases(records: Sequence[aacr.Record], negatives: dict[str, aacr.Record], args: argparse.Namespace,
               counts: Counts) -> list[dict]:
    made = (_case(record, repo, negatives, args, counts) for record, repo in _available(records, args, counts))
    return [case for case in made if case is not None]


def _header(args: argparse.Namespace, counts: Counts) -> str:
    lines = [f"A `reviewer eval` corpus (docs/eval.md) written by `reviewer eval import aacr-bench "
             f"{os.path.basename(args.file)} --profile {args.profile}`",
             f"from AACR-Bench (github.com/alibaba/aacr-bench, Apache-2.0): profile {args.profile}, "
             f"{aacr.PROFILES[args.profile]}.", "Import again rather than edit it.", *_summary(counts)]
    return "\n".join(f"# {line}".rstrip() for line in lines) + "\n"


def _summary(counts: Counts) -> list[str]:
    out = [f"comments: {counts.comments} read, {counts.in_profile} in the profile, {counts.items} item(s) after "
           f"{counts.collapsed} duplicate(s) at the same lines were collapsed; {counts.left_mapped} left-side "
           f"comment(s) mapped to the head; {counts.reversed} written with from_line after to_line"]
    out += [f"left out: {count} {why}" for why, count in sorted(counts.left_out.items())]
    if counts.places:
        out.append(f"must-not places from rejected comments: {counts.places}")
    if counts.skipped:
        out.append(f"{len(counts.skipped)} pull request(s) skipped:")
        out += [f"  {case}: {why}" for case, why in counts.skipped]
    return out


def write(cases: list[dict], args: argparse.Namespace, counts: Counts) -> str:
    text = render(cases, _header(args, counts))
    path = os.path.join(args.out, CORPUS_FILE)
    corpus, problems = load_corpus(text, path)
    if corpus is None:  # the writer and the loader disagree: a bug, said plainly rather than written
        raise Stop(2, f"the corpus made is not valid: {problems[0].code}: {problems[0].message}")
    os.makedirs(args.out, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def run_import(args: argparse.Namespace, out: IO[str]) -> int:
    if not os.path.isdir(args.repos):
        raise Stop(2, f"--repos {args.repos}: no such directory")
    records = _read(args.file, "benchmark file")
    negatives = {r.id: r for r in _read(args.negatives, "--negatives file")} if args.negatives else {}
    counts = Counts()
    cases = make_cases(records, negatives, args, counts)
    if not cases:
        reasons = "; ".join(f"{case}: {why}" for case, why in counts.skipped[:3])
        raise Stop(2, f"no case could be made from {args.file}: {reasons}")
    path = write(cases, args, counts)
    print(f"reviewer eval import: {len(cases)} case(s) with {counts.items} must-find item(s) written to {path} "
          f"(profile {args.profile})", file=out)
    for line in _summary(counts):
        print(f"  {line}", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return run_import(args, sys.stdout)
    except Stop as stop:
        print(stop if stop.code == 1 else f"reviewer eval import: {stop}", file=sys.stderr)
        return stop.code
    except git.GitError as error:
        print(f"reviewer eval import: {error}", file=sys.stderr)
        return 2
