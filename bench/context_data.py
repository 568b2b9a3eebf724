"""The cases of bench/context_repos.py: where their repositories lie, and each case's change.

Shared by the bench (bench/context_repos.py) and the tool that derives each case's ground truth
(bench/context_truth.py); it imports nothing of `bot`, so that the bench can run the same cases
through another checkout's code.

A case is a small pull request on a public repository at a pinned commit: either a real commit
replayed (`base` its parent, `head` the commit), or our own small edit of real code (`edits`
applied to `base`). The repositories are never part of this repository: they are found where
`fetch` leaves them (`/work/.mirror/owner+name/repo`), or under the directory `--repos DIR` or
`REVIEWER_BENCH_REPOS` names (`DIR/owner+name/repo`, `DIR/owner+name`, `DIR/owner/name` or
`DIR/name`, a git directory or a checkout).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

CASES = Path(__file__).resolve().parent / "context_cases.json"
DEFAULT_REPOS = "/work/.mirror"


@dataclass(frozen=True)
class Change:
    """A case's change as GitHub gives a pull request's files, and the texts at its head."""

    entries: list[dict]  # {"filename", "status", "patch"}
    head_texts: dict[str, str]  # path → text at the head, for every file not removed


def load_cases(path: Path = CASES) -> list[dict]:
    return json.loads(path.read_text())["cases"]


def repos_dir(given: str | None) -> str:
    return given or os.environ.get("REVIEWER_BENCH_REPOS") or DEFAULT_REPOS


def find_repo(root: str, name: str) -> str | None:
    """The git directory (or checkout) of `owner/name` under `root`, or None."""
    owner, _, short = name.partition("/")
    for candidate in (Path(root) / f"{owner}+{short}" / "repo", Path(root) / f"{owner}+{short}",
                      Path(root) / owner / short, Path(root) / short):
        if candidate.is_dir() and _is_git(candidate):
            return str(candidate)
    return None


def _is_git(path: Path) -> bool:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "--git-dir"], capture_output=True)
    return done.returncode == 0


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def has_commit(repo: str, sha: str) -> bool:
    done = subprocess.run(["git", "-C", repo, "cat-file", "-e", f"{sha}^{{commit}}"], capture_output=True)
    return done.returncode == 0


def show(repo: str, commit: str, path: str) -> str | None:
    done = subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], capture_output=True)
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


def apply_edits(text: str, edits: list[dict], where: str) -> str:
    """Our own small patch of one file: each edit names a 1-based `line` and the `old` text it must
    hold (so a wrong pin fails loudly instead of editing the wrong line), and the `new` text (one
    or more lines; empty string: the line is removed); or `after` a line, the lines to `insert`.
    Edits are applied bottom-up, so every line number is the base's."""
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: -(e.get("line") or e.get("after") or 0)):
        if "line" in edit:
            index = edit["line"] - 1
            if lines[index].strip() != edit["old"].strip():
                raise ValueError(f"{where}: line {edit['line']} is {lines[index]!r}, not {edit['old']!r}")
            lines[index:index + 1] = edit["new"].split("\n") if edit["new"] != "" else []
        else:
            index = edit["after"]
            lines[index:index] = edit["insert"].split("\n")
    return "\n".join(lines)


def unified(path: str, old: str, new: str) -> str:
    """The patch GitHub would show for one file (3 lines of context, hunks only)."""
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3)
    return "\n".join(line for line in diff if not line.startswith(("---", "+++")))


def change_of(repo: str, case: dict) -> Change:
    """The case's pull request: a real commit's diff, or our edits of files at `base`."""
    if case.get("head"):
        return _commit_change(repo, case["base"], case["head"])
    entries: list[dict] = []
    texts: dict[str, str] = {}
    by_path: dict[str, list[dict]] = {}
    for edit in case["edits"]:
        by_path.setdefault(edit["path"], []).append(edit)
    for path, edits in by_path.items():
        old = show(repo, case["base"], path)
        if old is None:
            raise ValueError(f"case {case['id']}: {path} is not in {case['base'][:10]}")
        new = apply_edits(old, edits, f"case {case['id']}, {path}")
        entries.append({"filename": path, "status": "modified", "patch": unified(path, old, new)})
        texts[path] = new
    return Change(entries, texts)


def _commit_change(repo: str, base: str, head: str) -> Change:
    names = git(repo, "diff", "--no-renames", "--name-status", base, head).decode().splitlines()
    entries: list[dict] = []
    texts: dict[str, str] = {}
    for row in names:
        status, _, path = row.partition("\t")
        old = "" if status == "A" else (show(repo, base, path) or "")
        new = "" if status == "D" else (show(repo, head, path) or "")
        entries.append({"filename": path, "status": {"A": "added", "D": "removed"}.get(status, "modified"),
                        "patch": unified(path, old, new)})
        if status != "D":
            texts[path] = new
    return Change(entries, texts)


def is_secondary(path: str) -> bool:
    """Tests, examples (samples too), benchmarks, fuzz targets and docs: code a change's callers
    may live in, but not the primary sources a reviewer opens first. A folder counts by any word
    of its name (`typing-examples`, `docs-v3`, `design-docs`); a file by its name alone too
    (`test.js`, `example.ts`)."""
    parts = path.lower().split("/")
    name = parts[-1]
    folders = {"test", "tests", "__tests__", "spec", "testdata", "example", "examples", "_examples", "sample",
               "samples", "bench",
               "benches", "benchmark", "benchmarks", "fuzz", "docs", "website", "perf-testing"}
    words = {word for part in parts[:-1] for word in re.split(r"[-_.]", part)}
    return bool(folders & set(parts[:-1]) or folders & words) \
        or any("test" in p or p.startswith("perf") for p in parts[:-1]) \
        or name.rsplit(".", 1)[0] in ("test", "tests", "spec", "example", "examples") \
        or name.startswith("test_") or name.endswith(
        ("_test.go", "_test.py", "test.java", "tests.java", ".test.ts", ".test.js", ".spec.ts", ".spec.js",
                 ".test-d.ts"))
