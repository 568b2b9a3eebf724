"""Repository index: build time and size for a generated repository of 10,000 files in six
languages, an incremental update of 10 changed files, and retrieval for a 20-file pull request.

Each figure is printed with a baseline measured in the same run:
- build: reading every blob with `git cat-file --batch` and storing the raw texts in a plain SQLite
  table (the I/O floor of any index); aim ≤ 60 s on a 2-core machine;
- update of 10 files: the full build; aim ≤ 1 s;
- retrieval for 20 changed files: a grep-like baseline that finds each used name's definition by
  scanning every file's text (what a reviewer without an index does); aim ≤ 200 ms;
- size: the source bytes; aim ≤ 2×.

Usage: python bench/index.py [--files N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bot.engine.index_context import changed_files  # noqa: E402
from bot.index.build import sync  # noqa: E402
from bot.index.gitdiff import diff_entries  # noqa: E402
from bot.index.gitsource import GitSnapshot  # noqa: E402
from bot.index.retrieve import retrieve  # noqa: E402
from bot.reviews.diff import read_patches  # noqa: E402
from bot.store.index.sqlite import SqliteIndex, connect  # noqa: E402

LANGS = ["py", "ts", "go", "java", "rs", "c"]
FUNCS_PER_FILE = 6


def fname(file: int, k: int) -> str:
    return f"compute_{file}_{k}"


def body(ext: str, file: int, rng: random.Random, files: int) -> str:
    """A file of FUNCS_PER_FILE functions, each calling two functions of other files."""
    out: list[str] = []
    if ext == "go":
        out.append("package gen\n")
    if ext == "java":
        out.append(f"public class Gen{file} {{")
    for k in range(FUNCS_PER_FILE):
        calls = [fname(rng.randrange(files), rng.randrange(FUNCS_PER_FILE)) for _ in range(2)]
        name = fname(file, k)
        if ext == "py":
            out += [f"def {name}(value, scale):", f'    """Scale {name} by its neighbours."""',
                    f"    first = {calls[0]}(value, scale)", f"    second = {calls[1]}(first, scale)",
                    "    if first > second:", "        return first * scale", "    return second + value", ""]
        elif ext == "ts":
            out += [f"export function {name}(value: number, scale: number): number {{",
                    f"  const first = {calls[0]}(value, scale);", f"  const second = {calls[1]}(first, scale);",
                    "  if (first > second) {", "    return first * scale;", "  }", "  return second + value;", "}", ""]
        elif ext == "go":
            out += [f"func {name}(value int, scale int) int {{", f"\tfirst := {calls[0]}(value, scale)",
                    f"\tsecond := {calls[1]}(first, scale)", "\tif first > second {", "\t\treturn first * scale",
                    "\t}", "\treturn second + value", "}", ""]
        elif ext == "java":
            out += [f"  public static int {name}(int value, int scale) {{",
                    f"    int first = Gen.{calls[0]}(value, scale);", f"    int second = Gen.{calls[1]}(first, scale);",
                    "    if (first > second) {", "      return first * scale;", "    }", "    return second + value;",
                    "  }", ""]
        elif ext == "rs":
            out += [f"pub fn {name}(value: i64, scale: i64) -> i64 {{", f"    let first = {calls[0]}(value, scale);",
                    f"    let second = {calls[1]}(first, scale);", "    if first > second {",
                    "        return first * scale;", "    }", "    second + value", "}", ""]
        else:
            out += [f"long {name}(long value, long scale) {{", f"    long first = {calls[0]}(value, scale);",
                    f"    long second = {calls[1]}(first, scale);", "    if (first > second) {",
                    "        return first * scale;", "    }", "    return second + value;", "}", ""]
    if ext == "java":
        out.append("}")
    return "\n".join(out) + "\n"


def path_of(file: int) -> str:
    ext = LANGS[file % len(LANGS)]
    return f"src/part{file % 40}/mod{file}.{ext}"


def git(repo: str, *args: str) -> None:
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True)


def make_repo(repo: str, files: int, rng: random.Random) -> int:
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "Bench")
    total = 0
    for i in range(files):
        path = Path(repo, path_of(i))
        path.parent.mkdir(parents=True, exist_ok=True)
        text = body(path.suffix[1:], i, rng, files)
        path.write_text(text)
        total += len(text.encode())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "generated")
    return total


def edit(repo: str, files: list[int], total: int, rng: random.Random, message: str) -> None:
    """Change one call in each of `files`: the changed line now calls another function."""
    for i in files:
        path = Path(repo, path_of(i))
        text = path.read_text()
        old = re.search(r"compute_\d+_\d+(?=\()", text.split("\n", 3)[-1])
        assert old is not None
        text = text.replace(old.group(0), fname(rng.randrange(total), 1), 1)
        path.write_text(text)
    git(repo, "commit", "-qam", message)


def head(repo: str) -> str:
    return subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def baseline_build(repo: str, commit: str, db: str) -> float:
    started = time.perf_counter()
    snap = GitSnapshot(repo, commit)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE raw (path TEXT PRIMARY KEY, body TEXT)")
    paths = [e.path for e in snap.entries()]
    for start in range(0, len(paths), 200):
        blobs = snap.read(paths[start:start + 200])
        conn.executemany("INSERT INTO raw VALUES (?, ?)", [(p, b.decode()) for p, b in blobs.items()])
    conn.commit()
    conn.close()
    return time.perf_counter() - started


def grep_retrieval(texts: dict[str, str], names: set[str]) -> dict[str, str]:
    """For each name, the first file that defines it, by scanning every text."""
    found: dict[str, str] = {}
    patterns = {n: re.compile(rf"(def|function|func|fn|int|long) {n}\(") for n in names}
    for path, text in texts.items():
        for name, pattern in patterns.items():
            if name not in found and name in text and pattern.search(text):
                found[name] = path
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        os.mkdir(repo)
        source_bytes = make_repo(repo, args.files, rng)
        base = head(repo)
        print(f"generated {args.files} files ({source_bytes / 1e6:.1f} MB) in {len(LANGS)} languages")

        raw = baseline_build(repo, base, os.path.join(tmp, "raw.sqlite3"))
        db = os.path.join(tmp, "index.sqlite3")
        store = SqliteIndex(connect(db), "bench/repo")
        started = time.perf_counter()
        report = sync(store, GitSnapshot(repo, base))
        build = time.perf_counter() - started
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
        print(f"build: {build:.2f} s for {report.indexed} files (aim <= 60 s); baseline raw copy {raw:.2f} s; "
              f"ratio {build / raw:.1f}x")
        print(f"size: {size / 1e6:.1f} MB index for {source_bytes / 1e6:.1f} MB source: "
              f"{size / source_bytes:.2f}x (aim <= 2x)")

        edit(repo, rng.sample(range(args.files), 10), args.files, rng, "ten files")
        started = time.perf_counter()
        update = sync(store, GitSnapshot(repo, head(repo)))
        updated = time.perf_counter() - started
        print(f"update of 10 files: {updated * 1000:.0f} ms ({update.read} read; aim <= 1 s); "
              f"ratio to the full build {updated / build:.4f}")

        git(repo, "checkout", "-q", "-b", "pr")
        edit(repo, rng.sample(range(args.files), 20), args.files, rng, "twenty files")
        merge_base, pr_head = head(repo) + "~1", head(repo)
        entries = diff_entries(repo, merge_base, pr_head)
        blobs = GitSnapshot(repo, pr_head).read([e["filename"] for e in entries])
        texts = {p: b.decode() for p, b in blobs.items()}
        changes = changed_files(read_patches(entries), texts)
        ours, pieces = [], 0
        for _ in range(args.rounds):
            started = time.perf_counter()
            found = retrieve(store, changes, 48_000)
            ours.append(time.perf_counter() - started)
            pieces = len(found.pieces)
        names = {m.group(0) for c in changes for _, line in c.added for m in re.finditer(r"compute_\d+_\d+", line)}
        all_texts = {e.path: store.text(e.path) or "" for e in GitSnapshot(repo, base).entries()}
        started = time.perf_counter()
        grep_retrieval(all_texts, names)
        grep = time.perf_counter() - started
        median = statistics.median(ours)
        print(f"retrieval for 20 changed files: {median * 1000:.0f} ms median of {args.rounds} "
              f"({pieces} pieces; aim <= 200 ms); grep baseline {grep * 1000:.0f} ms; ratio {median / grep:.3f}")


if __name__ == "__main__":
    main()
