"""The commits bench/context_repos.py's rule picks as cases of a repository, listed so that anyone
can pick them again: the rule is code, not a judgement made while looking at retrieval.

The rule (bench/context_repos.py's docstring gives it for the repositories held out by
repository; the development repositories' commit cases are picked the same way):
- the commits of the default branch (`--tip`, HEAD of the fetched repository by default),
  first-parent, newest first, each replayed against its first parent (a merge is the pull
  request it merged);
- that change 2 to 40 lines (added plus removed, renames as a removal and an addition, as the
  bench replays them) of the repository's language's primary sources: files of that language
  (bench/truth/model.py) that bench.context_data.is_secondary does not call tests, examples,
  benchmarks or docs; other files may change too;
- with `--derive N`: the first N of them whose derived truth (bench/context_truth.py's rules,
  before any review) holds at least one definition or caller.

Usage: python bench/context_pick.py OWNER/NAME LANGUAGE [--tip REF] [--list N] [--derive N]
[--prefix ID] [--set held-out] [--write]. `--write` adds the derived cases (not yet reviewed) to
bench/context_cases.json; review them with bench/context_truth.py as its rules say.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from context_data import CASES, find_repo, is_secondary, repos_dir  # noqa: E402
from context_truth import dump  # noqa: E402
from truth.derive import derive  # noqa: E402
from truth.model import language  # noqa: E402

FEWEST, MOST = 2, 40


@dataclass(frozen=True)
class Candidate:
    commit: str
    parent: str
    lines: int  # changed lines of the primary sources
    subject: str


def primary_lines(numstat: str, lang: str) -> int:
    """Lines added plus removed in the primary sources of `lang`, from `git diff --numstat` rows
    (binary files, shown as `-`, are never sources)."""
    total = 0
    for row in numstat.splitlines():
        parts = row.split("\t")
        if len(parts) != 3 or parts[0] == "-":
            continue
        added, removed, path = parts
        if language(path) == lang and not is_secondary(path):
            total += int(added) + int(removed)
    return total


def first_parent_commits(repo: str, tip: str) -> list[tuple[str, str, str]]:
    """(commit, first parent, subject) of the default branch, first-parent, newest first; the
    root commit, which has no parent to replay against, left out. Records are split at git's
    newlines only: a subject may hold a character str.splitlines() also breaks at (mockito has
    one ending in U+2028)."""
    out = subprocess.run(["git", "-C", repo, "log", "--first-parent", "--format=%H%x00%P%x00%s", tip],
                         check=True, capture_output=True, text=True, errors="replace").stdout
    rows = []
    for line in filter(None, out.split("\n")):
        commit, parents, subject = line.split("\x00", 2)
        if parents:
            rows.append((commit, parents.split()[0], subject))
    return rows


def qualifying(repo: str, lang: str, tip: str = "HEAD") -> Iterator[Candidate]:
    """The commits the rule admits, newest first. A commit the fetched snapshot cannot replay (a
    large blob left out of it) is passed over."""
    for commit, parent, subject in first_parent_commits(repo, tip):
        done = subprocess.run(["git", "-C", repo, "diff", "--no-renames", "--numstat", parent, commit],
                              capture_output=True, text=True, errors="replace")
        if done.returncode != 0:
            continue
        lines = primary_lines(done.stdout, lang)
        if FEWEST <= lines <= MOST:
            yield Candidate(commit, parent, lines, subject)


def case_of(name: str, lang: str, candidate: Candidate, prefix: str, tip: str, side: str | None) -> dict:
    case = {"id": f"{prefix}-{candidate.commit[:8]}", "repo": name, "language": lang, "base": candidate.parent,
            "head": candidate.commit}
    if side:
        case["set"] = side
    case["about"] = (f"picked by bench/context_pick.py's rule (tip {tip[:10]}, {candidate.lines} lines): "
                     f"{candidate.subject}")
    return case


def picked(repo: str, name: str, lang: str, tip: str, count: int, prefix: str, side: str | None) -> list[dict]:
    """The first `count` qualifying commits whose unreviewed derived truth is not empty, as cases."""
    out: list[dict] = []
    for candidate in qualifying(repo, lang, tip):
        case = case_of(name, lang, candidate, prefix, tip, side)
        derived = derive(repo, case)
        print(f"{candidate.commit[:10]} {candidate.lines:>3} lines, truth {len(derived['truth'])}: "
              f"{candidate.subject[:70]}", file=sys.stderr)
        if derived["truth"]:
            out.append(case | derived)
            if len(out) >= count:
                break
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("name", help="owner/name")
    parser.add_argument("language", choices=("python", "go", "javascript", "typescript", "java", "rust"))
    parser.add_argument("--repos")
    parser.add_argument("--tip", default="HEAD")
    parser.add_argument("--list", type=int, default=10, help="list this many qualifying commits")
    parser.add_argument("--derive", type=int, help="derive truth until this many cases have some")
    parser.add_argument("--prefix", help="case ids: PREFIX-<commit>")
    parser.add_argument("--set", dest="side", choices=("held-out",))
    parser.add_argument("--write", action="store_true", help="add the derived cases to bench/context_cases.json")
    args = parser.parse_args()
    repo = find_repo(repos_dir(args.repos), args.name)
    if repo is None:
        raise SystemExit(f"{args.name} is not under {repos_dir(args.repos)}; fetch it first")
    tip = subprocess.run(["git", "-C", repo, "rev-parse", args.tip], check=True, capture_output=True,
                         text=True).stdout.strip()
    if not args.derive:
        for c in itertools.islice(qualifying(repo, args.language, tip), args.list):
            print(f"{c.commit} {c.lines:>3} {c.subject[:80]}")
        return
    prefix = args.prefix or f"{args.language}-{args.name.split('/')[1]}"
    cases = picked(repo, args.name, args.language, tip, args.derive, prefix, args.side)
    for case in cases:
        print(json.dumps({k: case[k] for k in ("id", "base", "head", "about")}))
    if args.write:
        data = json.loads(CASES.read_text())
        known = {c["id"] for c in data["cases"]}
        data["cases"] += [c for c in cases if c["id"] not in known]
        CASES.write_text(dump(data))


if __name__ == "__main__":
    main()
