"""The built-in analyzers on a 300-file pull request of a real repository: the time, and the share
of it each tool takes.

The repository is tiangolo/fastapi (Python, shell scripts, GitHub workflows), found where `fetch`
leaves it (`/work/.mirror/tiangolo+fastapi/repo`) or under `--repos DIR` / `REVIEWER_BENCH_REPOS`;
without it the bench says so and exits 0. The pull request is made here: 300 files of its head
commit (its Python files, every shell script and workflow among them) each get a few lines added
in their middle — a helper with an unused variable and a comparison to None, an unquoted `echo`,
a step — and five of them a made-up cloud key, so that every tool has something to find.

Each tool's time through bot/analyzers/builtin (staging the copy, the bounded child, reading its
output as SARIF) is printed beside the tool run directly on the same files in a plain directory,
in the same run, so the ratio is our overhead; secret scanning has no such baseline (it runs in
this process) and is printed alone.

    .venv/bin/python bench/analyzers.py [--repos DIR] [--files 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.analyzers.builtin import run_builtins  # noqa: E402
from bot.analyzers.builtin.tools import TOOLS, Unavailable, binary  # noqa: E402
from bot.analyzers.settings import AnalyzerSettings  # noqa: E402
from bot.reviews.diff import read_patches  # noqa: E402

REPO = "tiangolo/fastapi"
KEY = "AKIA" + "Q3EGRT5JXMPLVW4Z"  # made up, in the format of an AWS access key id
ADDED = {
    "py": ["def _bench_helper(value):", "    unused = 1", "    return value == None", ""],
    "sh": ['echo $BENCH_VALUE'],
    "yml": ["# bench: a comment line in the workflow"],
}


def find_repo(given: str | None) -> Path | None:
    root = Path(given or os.environ.get("REVIEWER_BENCH_REPOS") or "/work/.mirror")
    owner, name = REPO.split("/")
    for candidate in (root / f"{owner}+{name}" / "repo", root / f"{owner}+{name}", root / owner / name, root / name):
        if candidate.is_dir():
            return candidate
    return None


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir" if (repo / "HEAD").exists() else "-C", str(repo), *args],
                          check=True, capture_output=True).stdout


def kind(path: str) -> str | None:
    if path.endswith(".py"):
        return "py"
    if path.endswith(".sh"):
        return "sh"
    if path.startswith(".github/workflows/") and path.endswith((".yml", ".yaml")):
        return "yml"
    return None


def make_pull_request(repo: Path, count: int) -> tuple[list[dict], dict[str, bytes], dict[str, bytes]]:
    """(GitHub file entries, head contents, configuration files) of a pull request touching `count` files."""
    paths = git(repo, "ls-tree", "-r", "--name-only", "HEAD").decode().splitlines()
    chosen = [p for p in paths if kind(p) in ("sh", "yml")]
    chosen += [p for p in paths if kind(p) == "py"][: count - len(chosen)]
    entries, heads = [], {}
    python = 0
    for path in chosen:
        base = git(repo, "show", f"HEAD:{path}").decode("utf-8", "replace").splitlines()
        middle = len(base) // 2
        lines = list(ADDED[kind(path) or "py"])
        if kind(path) == "yml":  # a comment keeps the workflow's YAML valid wherever it lands
            lines = [lines[0]]
        if kind(path) == "py":
            if python % 60 == 0:  # five keys in 300 files
                lines.append(f"AWS_ACCESS_KEY_ID = '{KEY}'")
            python += 1
        head = base[:middle] + lines + base[middle:]
        patch = "\n".join(list(difflib.unified_diff(base, head, lineterm="", n=3))[2:])
        entries.append({"filename": path, "status": "modified", "patch": patch})
        heads[path] = ("\n".join(head) + "\n").encode()
    configs = {}
    for name in ("pyproject.toml", "ruff.toml", ".ruff.toml", ".shellcheckrc", ".github/actionlint.yaml"):
        try:
            configs[name] = git(repo, "show", f"HEAD:{name}")
        except subprocess.CalledProcessError:
            pass
    return entries, heads, configs


def direct(tool: str, heads: dict[str, bytes], configs: dict[str, bytes]) -> float | None:
    """The tool run directly (no launcher, no limits, no SARIF reading) on the same files."""
    try:
        executable = binary(tool)
    except Unavailable:
        return None
    spec = TOOLS[tool]
    files = {p: c for p, c in heads.items() if spec.wants(p, c)}
    if not files:
        return None
    kept, _ = spec.configs(configs)
    with tempfile.TemporaryDirectory() as directory:
        for path, content in {**kept, **files}.items():
            (Path(directory) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(directory) / path).write_bytes(content)
        started = time.perf_counter()
        subprocess.run(spec.argv(executable, sorted(files), kept), cwd=directory, capture_output=True)
        return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", help="where fetched repositories lie (default: REVIEWER_BENCH_REPOS, else "
                                        "/work/.mirror)")
    parser.add_argument("--files", type=int, default=300, help="files the pull request touches (default: 300)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each measure; the median is shown (default: 3)")
    args = parser.parse_args()
    repo = find_repo(args.repos)
    if repo is None:
        print(f"bench/analyzers.py: {REPO} is not on this machine (fetch it: github:{REPO}); skipped")
        return 0
    entries, heads, configs = make_pull_request(repo, args.files)
    patches = read_patches(entries)
    added = sum(line.kind == "+" for p in patches.values() for h in p.hunks for line in h.lines)
    print(f"{REPO} at {git(repo, 'rev-parse', '--short', 'HEAD').decode().strip()}: a pull request of "
          f"{len(entries)} files, {added} added lines; configuration: {', '.join(configs) or 'none'}")
    settings = AnalyzerSettings(secrets=True, ruff=True, shellcheck=True, actionlint=True, timeout=300)
    per_tool: dict[str, list[float]] = {}
    totals, found = [], {}
    for _ in range(args.rounds):
        started = time.perf_counter()
        run = asyncio.run(run_builtins(settings, patches, heads, configs))
        totals.append(time.perf_counter() - started)
        for tool_run in run.runs:
            per_tool.setdefault(tool_run.tool, []).append(tool_run.seconds)
            found[tool_run.tool] = (len(tool_run.results), tool_run.files, tool_run.notes)
    total = statistics.median(totals)
    print(f"all built-in analyzers: {total:.2f} s (median of {args.rounds})")
    print(f"{'tool':<16}{'files':>7}{'results':>9}{'seconds':>9}{'share':>8}{'direct':>9}{'ratio':>8}")
    for tool, seconds in per_tool.items():
        mine = statistics.median(seconds)
        results, files, notes = found[tool]
        baseline = [d for d in (direct(tool, heads, configs) for _ in range(args.rounds)) if d is not None] \
            if tool in TOOLS else []
        base = statistics.median(baseline) if baseline else None
        ratio = f"{mine / base:.2f}" if base else "-"
        print(f"{tool:<16}{files:>7}{results:>9}{mine:>9.3f}{mine / total:>8.0%}"
              f"{(f'{base:.3f}' if base else '-'):>9}{ratio:>8}")
        for note in notes:
            print(f"    note: {note}")
    if shutil.which("actionlint", path=str(Path(sys.executable).parent)) is None and not shutil.which("actionlint"):
        print("actionlint is not installed here (its PyPI wheel downloads the binary from GitHub when built)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
