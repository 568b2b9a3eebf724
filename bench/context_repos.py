"""Retrieval quality on public repositories in several languages: small pull requests at pinned
commits (bench/context_cases.json), scored against a ground truth derived mechanically and
reviewed (bench/context_truth.py says how), with another checkout's code measured in the same run.

Each case is a real commit replayed (its parent as base) or our own small edit of real code. The
index is built at the case's base (one index per repository, brought from base to base), and
retrieval runs within the review's default budget, exactly as `reviewer context` does.

Figures, per language and overall:
- definition recall: the share of truth definitions (what the added lines use, defined in other
  files) that some returned `definition` piece overlaps;
- caller recall: the share of truth calling functions (one per function holding a use of a
  changed definition, in the primary sources) that some returned `caller` piece overlaps;
- precision: the share of returned definition and caller pieces that overlap a truth or an
  acceptable item of their kind in their file (acceptable: any definition of a name the added
  lines use, any function holding a use of a changed name, tests and examples included). Related
  pieces are search hits, labelled as such: they count in lines, not in precision;
- lines returned per case (all pieces), and seconds per case (retrieval; the index build is
  printed apart).
Aims: on the held-out repositories (the headline row) and on the development repositories,
definitions >= 0.9 and callers >= 0.9 with precision >= 0.7 and no lower than the baseline's; no
case over 2,000 lines or 60 s. The development repositories' cases marked `"set": "held-out"` were
picked by a fixed rule (the newest small commits of each repository, 2 to 40 changed lines in its
primary sources) after an earlier round's retrieval was written, and are also shown on their own
row: the figures of cases a retrieval was developed against flatter it.

Held out by repository (the headline). Cases held out of one repository still share its layout and
idioms with the cases the retrieval was written against, so some repositories are never looked at
while retrieval is developed. The rule, written down on 2026-12-07 before any retrieval change of
that round, and the repositories it chose (HELD_OUT below):
- one repository per language the bench measures (Python, Go, JavaScript, TypeScript, Rust, Java),
  a widely used library whose owner has no other repository in the bench and whose code no one
  working on retrieval had opened: for each language, the first of this list that `fetch` brings,
  written before any was looked at: Python encode/httpx, Go gin-gonic/gin, JavaScript koajs/koa,
  TypeScript pmndrs/zustand, Rust dtolnay/anyhow, Java square/retrofit (Java's must be a
  multi-module build, its sources under `<module>/src/main/java`; retrofit is one);
- their cases: the newest commits of the default branch, first-parent, that change 2 to 40 lines
  of the language's primary sources (bench.context_data.is_secondary tells the rest) and whose
  derived truth holds at least one definition or caller, four per repository (bench/context_pick.py
  lists and derives them: the rule as code); truth derived by
  bench/context_truth.py and reviewed only as its rules say (which of several same-named
  definitions a reader would open), never against what retrieval returns;
- while retrieval is developed, the bench runs with `--side development`, which leaves them out;
  cases added for misses found go to the development repositories only.
- once a held-out repository's misses have been read (the first set's were, on 2026-12-07, when its
  first figures came out), it has taught retrieval's developers something and stops being held
  out: it moves to development, and the next repository of its language takes its place, by the
  same rule, from this list written on that day before any of them was fetched or opened:
  Python python-attrs/attrs, Go labstack/echo, JavaScript debug-js/debug, TypeScript
  colinhacks/zod, Rust tokio-rs/bytes, Java mockito/mockito (multi-module).
- Generations so far: the first (httpx, gin, koa, zustand, anyhow, retrofit) measured once, on
  2026-12-07, and moved to development the same day. The second (attrs, echo, debug, zod, bytes,
  mockito) was picked by someone not working on retrieval, but the same day retrieval's developer
  wrote tests shaped like two of them (an echo-style Context interface, debug's
  createDebug.enable = enable) while their cases sat in this repository's case file: it can no
  longer be called unseen, and it moved to development before it was ever measured. The third
  generation takes its place, chosen by the same rule from this list, written on 2026-12-07 at
  18:20 UTC before any of them was fetched: Python marshmallow-code/marshmallow, Go urfave/cli,
  JavaScript pinojs/pino, TypeScript reduxjs/redux, Rust hyperium/http, Java OpenFeign/feign
  (multi-module). Its cases were kept out of this repository until retrieval's development of the
  round had stopped, and measured once that day (the table's figures per language and side; no
  case's misses or wrong pieces were read, so it stays held out: run it with `--side held-out`
  only to measure, never `--verbose`, until the round that reads its misses retires it). The next
  round measured it twice more, with tables only, after development on the fourth and fifth
  batches (whose choice, type-heavy TypeScript and Go's common method names, its per-language
  figures did steer), and derived its truth again when the truth tool's rules changed (a brace
  in type parameters; a module's unexported names): one TypeScript case's acceptable items grew,
  no truth item moved.

A fourth batch of development repositories, added 2026-12-07 for layouts the retrieval had not
seen (a hooks library's `_internal` barrel, a store's building blocks, a bundled client with its
`dist/` and `.d.ts` typings, a terminal renderer's modules, flat Go packages with many methods of
common names, a Rust client's builders, a Java multi-module Maven build): TypeScript vercel/swr and
pmndrs/jotai, JavaScript axios/axios, Python Textualize/rich, Go sirupsen/logrus and spf13/viper,
Rust seanmonstar/reqwest, Java google/gson. No held-out role: their misses are
read while retrieval is developed. Their cases (four each) were picked by bench/context_pick.py's
rule before retrieval was run on them, and their truth reviewed by bench/context_truth.py's rules
only; they are shown on a row of their own (ADDED below). A fifth batch, added 2026-12-07 for
type-heavy TypeScript (types named in annotations, generic arguments and `extends` clauses, defined
as aliases and interfaces and reached through `import type` and barrels): ReactiveX/rxjs and
mobxjs/mobx, their cases picked by the same rule, with our own edits of such code beside them.

The repositories are not in this repository: fetch them (github:owner/name) or clone them under a
directory given by `--repos DIR` or REVIEWER_BENCH_REPOS (bench/context_data.py says where it
looks); a case whose repository or commit is missing is skipped with a message.

Usage: python bench/context_repos.py [--repos DIR] [--baseline-ref REF] [--side development|held-out|all]
[--case ID ...] [--verbose]. `--side development` leaves out every case of a HELD_OUT repository
(what retrieval's development runs); the table shows each side per language, the development
repositories' cases held out by case, each side overall, and last the headline row, the
repositories held out by repository.
`--baseline-ref main` checks out that ref of this repository in a temporary git worktree and runs
the same cases through its code (in a subprocess), so both columns come out of one run. A case
that either code fails on (an exception while indexing or retrieving) is printed with the error and
counted as returning nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from context_data import change_of, find_repo, has_commit, load_cases, repos_dir  # noqa: E402

# The third generation, chosen by the rule in the docstring before any was fetched; never tuned on.
HELD_OUT = frozenset({"marshmallow-code/marshmallow", "urfave/cli", "pinojs/pino", "reduxjs/redux",
                      "hyperium/http", "OpenFeign/feign"})
# The earlier generations (the docstring says why each stopped being held out); development since,
# each on a row of its own.
RETIRED = {
    "first held-out generation (development now)": frozenset({
        "encode/httpx", "gin-gonic/gin", "koajs/koa", "pmndrs/zustand", "dtolnay/anyhow", "square/retrofit"}),
    "second held-out generation (development now)": frozenset({
        "python-attrs/attrs", "labstack/echo", "debug-js/debug", "colinhacks/zod", "tokio-rs/bytes", "mockito/mockito"}),
}

# Development repositories added for layouts retrieval had not seen (the docstring says when and
# why), each batch on a row of its own: every case of theirs, as picked and as added since.
ADDED = {
    "fourth batch of development repositories": frozenset({
        "vercel/swr", "pmndrs/jotai", "axios/axios", "Textualize/rich", "sirupsen/logrus", "spf13/viper",
        "seanmonstar/reqwest", "google/gson"}),
    "fifth batch of development repositories": frozenset({"ReactiveX/rxjs", "mobxjs/mobx"}),
}

# --- the worker: one checkout's code, run in a subprocess --------------------------------------


def worker(code: str) -> None:
    """Read jobs (JSON on stdin), retrieve with the code under `code`, print the pieces as JSON."""
    sys.path.insert(0, code)
    from bot.engine.index_context import changed_files
    from bot.engine.request import DEFAULT_BUDGETS
    from bot.index.build import sync
    from bot.index.gitsource import GitSnapshot
    from bot.index.retrieve import retrieve
    from bot.reviews.diff import read_patches
    from bot.store.index.sqlite import SqliteIndex, connect

    jobs = json.load(sys.stdin)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        stores: dict[str, SqliteIndex] = {}
        for job in jobs:
            repo = job["repoPath"]
            if repo not in stores:
                stores[repo] = SqliteIndex(connect(Path(tmp) / f"{len(stores)}.sqlite3"), "bench")
            store = stores[repo]
            started = time.perf_counter()
            try:
                sync(store, GitSnapshot(repo, job["base"]))
                built = time.perf_counter() - started
                changes = changed_files(read_patches(job["entries"]), job["headTexts"])
                started = time.perf_counter()
                got = retrieve(store, changes, DEFAULT_BUDGETS.index)
            except Exception as exc:  # that code fails on the case: it returns nothing, and says why
                results[job["id"]] = {"seconds": 0.0, "buildSeconds": 0.0, "bytes": 0, "pieces": [],
                                      "error": f"{type(exc).__name__}: {exc}"}
                continue
            seconds = time.perf_counter() - started
            results[job["id"]] = {
                "seconds": seconds, "buildSeconds": built, "bytes": got.used,
                "pieces": [[p.kind, p.path, p.start, p.end, p.symbol] for p in got.pieces]}
    json.dump(results, sys.stdout)


def run_worker(code: str, jobs: list[dict]) -> dict:
    done = subprocess.run([sys.executable, str(BENCH / "context_repos.py"), "--worker", code],
                          input=json.dumps(jobs), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the worker for {code} failed:\n{done.stderr}")
    return json.loads(done.stdout)


# --- scoring (pure) ----------------------------------------------------------------------------


def _overlaps(piece: list, path: str, start: int, end: int) -> bool:
    return piece[1] == path and piece[2] <= end and start <= piece[3]


def score(case: dict, result: dict) -> dict:
    pieces = result["pieces"]
    found = {"definition": [0, 0], "caller": [0, 0]}
    missed: list[str] = []
    for item in case["truth"]:
        hit = any(p[0] == item["kind"] and any(_overlaps(p, *alt) for alt in item["alts"]) for p in pieces)
        found[item["kind"]][0] += hit
        found[item["kind"]][1] += 1
        if not hit:
            missed.append(f"{item['kind']} {item['alts'][0][0]}:{item['alts'][0][1]} {item['symbol']}")
    judged = [p for p in pieces if p[0] in ("definition", "caller")]
    right = [p for p in judged if any(p[0] == a[0] and _overlaps(p, *a[1:]) for a in case["acceptable"])
             or any(p[0] == t["kind"] and any(_overlaps(p, *alt) for alt in t["alts"]) for t in case["truth"])]
    wrong = [f"{p[0]} {p[1]}:{p[2]}-{p[3]} {p[4]}" for p in judged if p not in right]
    return {"defs": found["definition"], "callers": found["caller"], "judged": len(judged), "right": len(right),
            "lines": sum(p[3] - p[2] + 1 for p in pieces), "seconds": result["seconds"],
            "build": result["buildSeconds"], "missed": missed, "wrong": wrong}


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "  - "


def _figures(got: list[dict]) -> dict[str, str]:
    d = [sum(s["defs"][0] for s in got), sum(s["defs"][1] for s in got)]
    c = [sum(s["callers"][0] for s in got), sum(s["callers"][1] for s in got)]
    right, judged = sum(s["right"] for s in got), sum(s["judged"] for s in got)
    lines = [s["lines"] for s in got]
    secs = [s["seconds"] for s in got]
    return {"definitions": f"{_ratio(*d)} {d[0]:>3}/{d[1]:<3}", "callers": f"{_ratio(*c)} {c[0]:>3}/{c[1]:<3}",
            "precision": f"{_ratio(right, judged)} {right:>4}/{judged:<4}",
            "lines/case": f"{sum(lines) / len(lines):5.0f} max {max(lines):>4}",
            "s/case": f"{sum(secs) / len(secs):5.2f} max {max(secs):5.2f}"}


def side_of(case: dict) -> str:
    """`held-out` for a case of a repository held out by the rule (HELD_OUT), else `development`."""
    return "held-out" if case["repo"] in HELD_OUT else "development"


def sections(cases: list[dict]) -> tuple[list[tuple[str, list[dict]]], list[tuple[str, list[dict]]]]:
    """The table's rows: one per side and language; then the summaries, in order: the development
    repositories' cases held out by case (the old split), the earlier held-out generations'
    (development since), the batches of development repositories added since (ADDED), the
    development repositories, all, and
    last the headline, the repositories held out by repository (never looked at while retrieval
    was developed)."""
    sides = {side: [c for c in cases if side_of(c) == side] for side in ("development", "held-out")}
    languages: list[tuple[str, list[dict]]] = []
    for side, members in sides.items():
        groups: dict[str, list[dict]] = defaultdict(list)
        for case in members:
            groups[case["language"]].append(case)
        languages += [(f"{side} {language}", group) for language, group in sorted(groups.items())]
    development, held = sides["development"], sides["held-out"]
    by_case = [c for c in development if c.get("set") == "held-out"]
    retired = [(label, [c for c in development if c["repo"] in repos and c.get("set") == "held-out"])
               for label, repos in RETIRED.items()]  # as the rule picked them, not edits of ours added since
    added = [(label, [c for c in development if c["repo"] in repos]) for label, repos in ADDED.items()]
    summaries = [("development repos, held-out cases", by_case), *retired, *added,
                 ("development repositories", development),
                 ("all repositories", cases if development and held else []),
                 ("HELD-OUT REPOSITORIES (headline)", held)]
    return languages, [(label, members) for label, members in summaries if members]


def table(cases: list[dict], columns: dict[str, dict[str, dict]]) -> list[str]:
    """A row per side and language, then the summaries (sections), each with the baseline's
    figures first and this checkout's below."""
    widths = {"definitions": 13, "callers": 13, "precision": 15, "lines/case": 14, "s/case": 16}
    head = f"{'side language':33} {'cases':>5} {'code':8} " + " ".join(f"{k:>{w}}" for k, w in widths.items())
    rows = [head]
    languages, summaries = sections(cases)
    for part in (languages, summaries):
        rows.append("-" * len(head))
        for label, members in part:
            for index, (name, scores) in enumerate(columns.items()):
                figures = _figures([scores[c["id"]] for c in members])
                first = f"{label:33} {len(members):>5}" if index == 0 else " " * 39
                rows.append(f"{first} {name[:8]:8} " + " ".join(f"{figures[k]:>{w}}" for k, w in widths.items()))
    return rows


# --- the run -----------------------------------------------------------------------------------


def jobs_for(cases: list[dict], root: str) -> tuple[list[dict], list[dict]]:
    """The cases whose repository and commits are here, as worker jobs; a message for the rest."""
    jobs, kept = [], []
    absent: dict[str, int] = {}
    for case in cases:
        repo = find_repo(root, case["repo"])
        if repo is None:
            absent[case["repo"]] = absent.get(case["repo"], 0) + 1
            continue
        missing = [c for c in (case["base"], case.get("head")) if c and not has_commit(repo, c)]
        if missing:
            print(f"skipped {case['id']}: {case['repo']} under {root} lacks commit {missing[0][:12]}")
            continue
        change = change_of(repo, case)
        jobs.append({"id": case["id"], "repoPath": repo, "base": case["base"], "entries": change.entries,
                     "headTexts": change.head_texts})
        kept.append(case)
    for name, count in absent.items():
        print(f"skipped {count} case(s) of {name}: not under {root} (fetch github:{name}, or give --repos DIR)")
    jobs.sort(key=lambda j: j["repoPath"])  # one index per repository, brought from base to base
    return jobs, kept


def baseline_checkout(ref: str, into: str) -> str:
    path = str(Path(into) / "baseline")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", path, ref], check=True)
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos")
    parser.add_argument("--baseline-ref")
    parser.add_argument("--case", action="append", default=[])
    parser.add_argument("--side", choices=("development", "held-out", "all"), default="all",
                        help="development: leave out every case of a repository held out (HELD_OUT)")
    parser.add_argument("--verbose", action="store_true", help="print each case's misses and wrong pieces")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    root = repos_dir(args.repos)
    cases = [c for c in load_cases() if (not args.case or c["id"] in args.case)
             and args.side in ("all", side_of(c))]
    jobs, cases = jobs_for(cases, root)
    if not jobs:  # nothing fetched here: said, and not a failure of `make bench`
        print(f"no case can run: no repository of bench/context_cases.json is under {root}")
        return
    columns: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        codes = {}
        if args.baseline_ref:
            codes[args.baseline_ref] = baseline_checkout(args.baseline_ref, tmp)
        codes["new"] = str(ROOT)
        try:
            for name, code in codes.items():
                results = run_worker(code, jobs)
                columns[name] = {c["id"]: score(c, results[c["id"]]) for c in cases}
                build = sum(r["buildSeconds"] for r in results.values())
                print(f"{name}: index builds and updates took {build:.1f} s over {len(jobs)} cases")
                for case_id, result in results.items():
                    if "error" in result:
                        print(f"{name}: {case_id} failed, counted as returning nothing: {result['error']}")
        finally:
            if args.baseline_ref:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", codes[args.baseline_ref]],
                               check=False)
    if args.verbose:
        for case in cases:
            for name, scores in columns.items():
                s = scores[case["id"]]
                print(f"{case['id']} [{name}] defs {s['defs'][0]}/{s['defs'][1]} callers {s['callers'][0]}/"
                      f"{s['callers'][1]} right {s['right']}/{s['judged']} lines {s['lines']} {s['seconds']:.2f}s")
                for miss in s["missed"]:
                    print(f"    missed {miss}")
                for wrong in s["wrong"]:
                    print(f"    wrong  {wrong}")
    for side in ("development", "held-out"):
        members = [c for c in cases if side_of(c) == side]
        if members:
            print(f"{side}: {len(members)} cases in {len({c['language'] for c in members})} languages, "
                  f"{len({c['repo'] for c in members})} repositories")
    print("\n".join(table(cases, columns)))


if __name__ == "__main__":
    main()
