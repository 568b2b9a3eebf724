"""A `reviewer eval` corpus mined from fix commits: `mine` writes corpus.yaml, `prepare` makes the
repositories it reviews (docs/eval.md).

    python scripts/eval_repos.py mine CORPUS_DIR      # sources.yaml → corpus.yaml
    python scripts/eval_repos.py prepare CORPUS_DIR   # → the repositories the corpus names (make eval)

`CORPUS_DIR/sources.yaml` names the repositories (`github: owner/name`, `language`, and `source`, a
regular expression over the paths a revert takes back; `tests`, one over the paths it leaves) and
the fix commits (`id`, `repo`, `commit`). A fix F becomes a pull request that brings its bug back:
base F, head a commit on F whose tree is F's with every `source` path F changed taken back to F's
parent. That commit is made with a fixed author, committer, date and message, so its id is the same
on every machine: `mine` writes it into corpus.yaml as the case's head, and `prepare` makes it
again and checks that it is. Each case's head is also left as `refs/eval/<id>`.

The repositories go to `CORPUS_DIR/../repos/<name>.git` (bare): cloned from a local copy under
$EVAL_MIRRORS (a folder of `<owner>+<name>/repo` or `<owner>+<name>`; no default) where there is one,
else from GitHub ($EVAL_CLONE_URL, default `https://github.com/{}.git`, `{}` standing for
owner/name); a repository neither gives is skipped with a message, and so are its cases
(`reviewer eval` reports them as unavailable). None of their code is kept in this repository.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bot.documents.yamldoc import load_yaml  # noqa: E402

MIRRORS = os.environ.get("EVAL_MIRRORS") or None  # local copies, when the machine has some
CLONE_URL = os.environ.get("EVAL_CLONE_URL", "https://github.com/{}.git")  # {} is owner/name
CLONE_TIMEOUT = 1800  # seconds for one `git clone` from GitHub
IDENT = {"GIT_AUTHOR_NAME": "Reviewer eval", "GIT_AUTHOR_EMAIL": "eval@reviewer.invalid",
         "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000", "GIT_COMMITTER_NAME": "Reviewer eval",
         "GIT_COMMITTER_EMAIL": "eval@reviewer.invalid", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000"}
TESTS = r"(^|/)(tests?|__tests__|spec|testdata)/|(_test|\.test|\.spec|Test)\.[A-Za-z]+$|(^|/)test_[^/]*$"
NEARBY = 20  # hunks of one file closer than this many lines are one must-find item
HEADER = """\
# A `reviewer eval` corpus (docs/eval.md), written by `python scripts/eval_repos.py mine eval/corpus`
# from sources.yaml: edit that file and mine again rather than this one. Each case brings a fixed
# bug back: base is the fix commit, head a commit reverting its source changes, which
# `make eval` (scripts/eval_repos.py prepare) makes in ../repos/ with the id given here.
"""


class Failed(Exception):
    pass


@dataclass(frozen=True)
class Repository:
    name: str
    github: str
    language: str
    source: re.Pattern[str]
    tests: re.Pattern[str]

    @property
    def path_in_corpus(self) -> str:
        return f"../repos/{self.name}.git"


@dataclass(frozen=True)
class Fix:
    id: str
    repo: str
    commit: str


def git(repo: Path | str, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})})
    if done.returncode != 0:
        raise Failed(f"git {' '.join(args[:3])}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def read_yaml(path: Path) -> dict:
    doc, problems = load_yaml(path.read_bytes())
    if doc is None or problems or not isinstance(doc.value, dict):
        raise Failed(f"{path}: not a usable YAML mapping ({problems[0].message if problems else 'empty'})")
    return doc.value


def load_sources(corpus: Path) -> tuple[dict[str, Repository], list[Fix]]:
    data = read_yaml(corpus / "sources.yaml")
    repos = {name: Repository(name, spec["github"], spec["language"], re.compile(spec["source"]),
                              re.compile(spec.get("tests", TESTS)))
             for name, spec in data["repositories"].items()}
    return repos, [Fix(f["id"], f["repo"], f["commit"]) for f in data["fixes"]]


def obtain(repo: Repository, into: Path) -> Path | None:
    """The bare repository at `into/<name>.git`: there already, else cloned from a local copy or GitHub."""
    target = into / f"{repo.name}.git"
    if (target / "HEAD").exists():
        return target
    into.mkdir(parents=True, exist_ok=True)
    local = f"{MIRRORS}/{repo.github.replace('/', '+')}" if MIRRORS else None
    for candidate in (f"{local}/repo", local) if local else ():
        if os.path.isfile(os.path.join(candidate, "HEAD")):
            git(into, "clone", "--bare", "--quiet", candidate, target.name)
            return target
    url = CLONE_URL.format(repo.github)
    try:
        git(into, "clone", "--bare", "--quiet", url, target.name, timeout=CLONE_TIMEOUT)
        return target
    except (Failed, subprocess.TimeoutExpired) as error:
        print(f"eval: skipping {repo.name} ({repo.github}): no copy under {MIRRORS or '$EVAL_MIRRORS (unset)'}, "
              f"and `git clone {url}` "
              f"failed ({str(error).splitlines()[-1]})", file=sys.stderr)
        return None


def reverted_paths(path: Path, repo: Repository, fix: Fix) -> list[str]:
    changed = git(path, "diff-tree", "--no-commit-id", "--name-only", "-r", "-z", f"{fix.commit}^", fix.commit)
    return [p for p in changed.split("\0") if p and repo.source.search(p) and not repo.tests.search(p)]


def subject(path: Path, commit: str) -> str:
    line = git(path, "log", "-1", "--format=%s", commit).strip()
    return re.sub(r"\s*\(#\d+\)$", "", line)


def revert(path: Path, fix: Fix, paths: list[str]) -> str:
    """The head of the case: F with `paths` as F's parent has them, made the same way everywhere."""
    if not paths:
        raise Failed(f"{fix.id}: {fix.commit[:12]} changes no source file")
    with tempfile.TemporaryDirectory(prefix="eval-index-") as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
        git(path, "read-tree", fix.commit, env=env)
        lines = []
        for name in paths:
            listed = git(path, "ls-tree", "-z", f"{fix.commit}^", "--", name).rstrip("\0")
            if listed:
                meta, _, _ = listed.partition("\t")
                mode, _, blob = meta.split()
                lines.append(f"{mode} {blob}\t{name}")
            else:
                lines.append(f"0 {'0' * 40}\t{name}")
        subprocess.run(["git", "-C", str(path), "update-index", "--index-info"], input="\n".join(lines) + "\n",
                       text=True, check=True, env={**os.environ, **env})
        tree = git(path, "write-tree", env=env).strip()
    message = f'Revert "{subject(path, fix.commit)}"\n\nTakes back the changes of {fix.commit} to {", ".join(paths)}.\n'
    head = git(path, "-c", "commit.gpgsign=false", "commit-tree", tree, "-p", fix.commit, "-m", message,
               env=IDENT).strip()
    git(path, "update-ref", f"refs/eval/{fix.id}", head)
    return head


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def must_find(path: Path, fix: Fix, head: str, paths: list[str], about: str) -> list[dict]:
    """The head's changed lines of each file, hunks closer than NEARBY lines taken as one item; a
    hunk that only deletes is the two lines around the deletion."""
    items = []
    for name in paths:
        ranges = []
        for match in _HUNK.finditer(git(path, "diff", "-U0", fix.commit, head, "--", name)):
            start, count = int(match[1]), int(match[2] if match[2] is not None else 1)
            ranges.append((max(1, start), start + 1) if count == 0 else (start, start + count - 1))
        merged: list[list[int]] = []
        for first, last in sorted(ranges):
            if merged and first - merged[-1][1] <= NEARBY:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        items += [{"path": name, "lines": span, "about": about} for span in merged]
    return items


def mined_case(path: Path, repo: Repository, fix: Fix) -> tuple[dict, str]:
    paths = reverted_paths(path, repo, fix)
    head = revert(path, fix, paths)
    about = subject(path, fix.commit)
    return {"id": fix.id, "repo": repo.path_in_corpus, "base": fix.commit, "head": head,
            "must_find": must_find(path, fix, head, paths, about)}, repo.language


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(cases: list[dict], languages: dict[str, str]) -> str:
    out = [HEADER + "cases:"]
    for case in cases:
        out += [f"  - id: {case['id']}  # {languages[case['id']]}", f"    repo: {case['repo']}",
                f"    base: {case['base']}", f"    head: {case['head']}", "    must_find:"]
        out += [f"      - {{path: {item['path']}, lines: [{item['lines'][0]}, {item['lines'][1]}], "
                f"about: {_quoted(item['about'])}}}" for item in case["must_find"]]
    return "\n".join(out) + "\n"


def mine(corpus: Path) -> int:
    repos, fixes = load_sources(corpus)
    cases, languages = [], {}
    for fix in fixes:
        path = obtain(repos[fix.repo], corpus.parent / "repos")
        if path is None:
            raise Failed(f"{fix.id}: its repository {fix.repo} is not available to mine from")
        case, languages[fix.id] = mined_case(path, repos[fix.repo], fix)
        cases.append(case)
    (corpus / "corpus.yaml").write_text(render(cases, languages))
    print(f"eval: {len(cases)} case(s) from {len({f.repo for f in fixes})} repositories written to "
          f"{corpus / 'corpus.yaml'}")
    return 0


def prepare(corpus: Path) -> int:
    """Every repository the corpus names, with each case's head made and checked against corpus.yaml."""
    repos, fixes = load_sources(corpus)
    heads = {c["id"]: c["head"] for c in read_yaml(corpus / "corpus.yaml")["cases"]}
    made = skipped = 0
    for name in dict.fromkeys(f.repo for f in fixes if f.id in heads):
        path = obtain(repos[name], corpus.parent / "repos")
        mine_here = [f for f in fixes if f.repo == name and f.id in heads]
        if path is None:
            skipped += len(mine_here)
            continue
        for fix in mine_here:
            head = revert(path, fix, reverted_paths(path, repos[name], fix))
            if head != heads[fix.id]:
                raise Failed(f"{fix.id}: the revert made here is {head}, corpus.yaml says {heads[fix.id]}")
            made += 1
    print(f"eval: {made} case head(s) ready under {corpus.parent / 'repos'} (refs/eval/<id>)"
          + (f"; {skipped} case(s) skipped: their repository is not available" if skipped else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("mine", "prepare"))
    parser.add_argument("corpus", type=Path, help="the corpus directory, holding sources.yaml")
    args = parser.parse_args(argv)
    try:
        return mine(args.corpus) if args.step == "mine" else prepare(args.corpus)
    except (Failed, OSError, KeyError, subprocess.CalledProcessError) as error:
        print(f"eval: {args.step}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
