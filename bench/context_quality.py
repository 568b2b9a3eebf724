"""Retrieval quality on real history: each commit of a repository (this one by default) replayed
as a pull request whose base is its parent, against the index of the parent.

Ground truth, derived mechanically from the parent's index and the commit's diff:
- definitions: every name called bare (`name(`, not `x.name(`) on an added line whose definition
  exists in exactly one file, at the top level, not in a file the commit changes — the
  definition a reviewer would open;
- callers: for every top-level function whose definition the commit changed (a touched line
  inside it), defined in exactly one file, each other unchanged file that calls it bare.
A method called through an object (`x.join(`) is left out of the truth: the text alone does not
say whose method it is (`", ".join` is Python's, not the repository's `Shape.join`).
Recall is the share of those (name, file) pairs that retrieval returned as a `definition`
(resp. `caller`) piece of that file, within the default budget. Names defined in several files
are left out of the truth: which one a call means is not decidable from the text alone.

Aims: definition recall >= 0.8, caller recall >= 0.6. Usage: python bench/context_quality.py
[--repo DIR] [--commits N]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bot.engine.index_context import changed_files  # noqa: E402
from bot.engine.request import DEFAULT_BUDGETS  # noqa: E402
from bot.index.build import sync  # noqa: E402
from bot.index.gitdiff import diff_entries  # noqa: E402
from bot.index.gitsource import GitSnapshot  # noqa: E402
from bot.index.parse import parse_symbols  # noqa: E402
from bot.index.retrieve import CALLABLE, ChangedFile, retrieve  # noqa: E402
from bot.reviews.diff import read_patches  # noqa: E402
from bot.store.index.sqlite import SqliteIndex, connect  # noqa: E402


def commits(repo: str, count: int) -> list[tuple[str, str]]:
    """(parent, commit) of the last `count` non-merge commits, oldest first."""
    out = subprocess.run(["git", "-C", repo, "log", "--no-merges", f"-{count}", "--format=%H %P"],
                         check=True, capture_output=True, text=True).stdout.split("\n")
    pairs = [tuple(line.split()[:2]) for line in out if len(line.split()) >= 2]
    return [(p, c) for c, p in reversed(pairs)]


def called(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\s*\(", text) is not None


def unique_definition(store: SqliteIndex, name: str) -> str | None:
    """The one file defining `name` at the top level; None when several files define it, or a
    class does."""
    found = store.definitions([name], 50)
    files = {loc.path for loc in found}
    if len(files) != 1 or any(loc.definition.scope for loc in found):
        return None
    return next(iter(files))


def truth(store: SqliteIndex, changes: list[ChangedFile]) -> tuple[set, set]:
    changed = {c.path for c in changes}
    definitions: set[tuple[str, str]] = set()
    callers: set[tuple[str, str]] = set()
    for change in changes:
        if change.head_text is None:
            continue
        symbols = parse_symbols(change.path, change.head_text)
        own = {d.name for d in symbols.definitions}
        added = dict(change.added)
        for name, lines in symbols.references.items():
            if name in own or not any(n in added and called(added[n], name) for n in lines):
                continue
            home = unique_definition(store, name)
            if home is not None and home not in changed:
                definitions.add((name, home))
        for d in symbols.definitions:
            if d.kind not in CALLABLE or d.scope or not any(d.start <= n <= d.end for n in change.touched):
                continue
            homes = {loc.path for loc in store.definitions([d.name], 50)} | {change.path}
            if len(homes) != 1:
                continue
            for ref in store.references([d.name], 500):
                if ref.path in changed:
                    continue
                lines = (store.text(ref.path) or "").splitlines()
                if any(0 < n <= len(lines) and called(lines[n - 1], d.name) for n in ref.lines):
                    callers.add((d.name, ref.path))
    return definitions, callers


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default=str(ROOT))
    parser.add_argument("--commits", type=int, default=200)
    args = parser.parse_args()
    pairs = commits(args.repo, args.commits)
    found_defs = total_defs = found_callers = total_callers = 0
    retrieval_seconds: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteIndex(connect(Path(tmp) / "index.sqlite3"), "replay")
        for parent, commit in pairs:
            sync(store, GitSnapshot(args.repo, parent))
            entries = diff_entries(args.repo, parent, commit)
            blobs = GitSnapshot(args.repo, commit).read([e["filename"] for e in entries if e["status"] != "removed"])
            texts = {p: b.decode("utf-8", errors="replace") for p, b in blobs.items()}
            changes = changed_files(read_patches(entries), texts)
            want_defs, want_callers = truth(store, changes)
            started = time.perf_counter()
            got = retrieve(store, changes, DEFAULT_BUDGETS.index)
            retrieval_seconds.append(time.perf_counter() - started)
            pieces = {(p.kind, p.path) for p in got.pieces}
            total_defs += len(want_defs)
            found_defs += sum(1 for _, path in want_defs if ("definition", path) in pieces)
            total_callers += len(want_callers)
            found_callers += sum(1 for _, path in want_callers if ("caller", path) in pieces)
    def_recall = found_defs / total_defs if total_defs else float("nan")
    caller_recall = found_callers / total_callers if total_callers else float("nan")
    retrieval_seconds.sort()
    median = retrieval_seconds[len(retrieval_seconds) // 2] if retrieval_seconds else 0.0
    print(f"replayed {len(pairs)} commits of {args.repo}")
    print(f"definition recall: {def_recall:.2f} ({found_defs} of {total_defs}; aim >= 0.8)")
    print(f"caller recall: {caller_recall:.2f} ({found_callers} of {total_callers}; aim >= 0.6)")
    print(f"retrieval: {median * 1000:.0f} ms median per commit")


if __name__ == "__main__":
    main()
