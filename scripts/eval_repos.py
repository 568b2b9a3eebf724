"""A `reviewer eval` corpus mined from public repositories: `mine` writes corpus.yaml and audit.json,
`prepare` makes the repositories they review (docs/eval.md "Building a corpus").

    python scripts/eval_repos.py mine CORPUS_DIR      # sources.yaml → corpus.yaml, audit.json
    python scripts/eval_repos.py prepare CORPUS_DIR   # → the repositories corpus.yaml names (make eval)

`CORPUS_DIR/sources.yaml` names the repositories (`github: owner/name`, `language`, `source`: a
regular expression over source paths, `tests`: one over test paths) and the cases. A case of kind
`fix` (it names `fix: COMMIT`, and `first:` when the fix took several commits) brings a fixed bug
back: its base is the fix's parent with the fix's source change (the comments as the parent had
them: scripts/eval_comments.py), and its head is that base with the source files taken back to the
parent, so that the pull request holds the bug alone, and neither side holds the fix's tests,
changelog or comments. A case of kind `change` (it names `change: COMMIT`) is a real commit
reviewed against its parent: with `must_find` items when it brought a bug in (a later fix names
it), without when it is a clean change whose findings all count against precision.

Base and head of a `fix` case are commits made here with a fixed author, committer, date and a
neutral message, by plumbing only, with no user or system git configuration read
(scripts/eval_git.py: a user's `log.showSignature`, `i18n.commitEncoding`, `color.ui` or `diff.*`
settings change nothing): the same ids on every machine. `mine` writes them into corpus.yaml;
`prepare` makes them again and stops if one comes out otherwise. Each head is also
`refs/eval/<id>`.

The repositories go to `CORPUS_DIR/../repos/<name>.git` (bare), cloned from a local copy under
`--mirrors DIR` (default $EVAL_MIRRORS; `<owner>+<name>/repo` or `<owner>+<name>`) where there is
one, else from $EVAL_CLONE_URL (default `https://github.com/{}.git`, `{}` standing for owner/name);
a repository neither gives is skipped with a message, and so are its cases (`reviewer eval`
reports them as unavailable). None of their code is kept in this repository: audit.json holds
commit, tree and blob ids and digests of comments, what tests/eval/test_starter_corpus.py checks.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_audit import problems  # noqa: E402
from eval_comments import comments, without_added_comments  # noqa: E402
from eval_git import Failed, blob, changed, commit_tree, git, parents, read, resolve, text, tree_of, with_files  # noqa: E402

from bot.documents.yamldoc import load_yaml  # noqa: E402
from bot.eval.corpus import load_corpus  # noqa: E402
from bot.eval.corpus_text import render  # noqa: E402

CLONE_TIMEOUT = 1800  # seconds for one `git clone` from GitHub
TESTS = r"(^|/)(tests?|__tests__|spec|testdata)/|(_test|\.test|\.spec|Test)\.[A-Za-z]+$|(^|/)test_[^/]*$"
NEARBY = 20  # hunks of one file closer than this many lines are one must-find item
TIERS = ("clear", "subtle", "debatable", "clean")
HEADER = """\
# A `reviewer eval` corpus (docs/eval.md), written by `python scripts/eval_repos.py mine eval/corpus`
# from sources.yaml: edit that file and mine again rather than this one. `make eval`
# (scripts/eval_repos.py prepare) makes the repositories in ../repos/, with these very commits.
"""


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
class Spec:
    """A case of sources.yaml."""

    id: str
    repo: str
    kind: str  # fix | change
    commit: str  # the fix's last commit, or the change
    first: str  # the fix's first commit (the commit itself when it took one)
    tier: str
    about: tuple[str, ...]  # for a fix: one description for every item, or one per item
    must_find: tuple[dict, ...]  # for a change
    must_not: tuple[dict, ...]


def read_yaml(path: Path) -> dict:
    doc, problems = load_yaml(path.read_bytes())
    if doc is None or problems or not isinstance(doc.value, dict):
        raise Failed(f"{path}: not a usable YAML mapping ({problems[0].message if problems else 'empty'})")
    return doc.value


FIELDS = {"fix": {"id", "repo", "fix", "first", "tier", "about", "must_find", "must_not"},
          "change": {"id", "repo", "change", "fixed_by", "tier", "must_find", "must_not"}}


def _spec(index: int, data: dict, repos: dict[str, Repository]) -> Spec:
    where = f"sources.yaml: cases[{index}] ({data.get('id', '?')})"
    kind = "fix" if "fix" in data else "change" if "change" in data else None
    if kind is None:
        raise Failed(f"{where}: give `fix: COMMIT` or `change: COMMIT`")
    unknown = set(data) - FIELDS[kind]
    missing = {"id", "repo", "tier", *(("about",) if kind == "fix" and "must_find" not in data else ()),
               *(("must_find",) if kind == "change" else ())} - set(data)
    if unknown or missing:
        raise Failed(f"{where}: " + "; ".join([f"unknown field(s) {', '.join(sorted(unknown))}"] * bool(unknown)
                                              + [f"missing {', '.join(sorted(missing))}"] * bool(missing)))
    if data["repo"] not in repos:
        raise Failed(f"{where}: `repo` {data['repo']} is not under `repositories`")
    if data["tier"] not in TIERS or (data["tier"] == "clean") != (kind == "change" and not data["must_find"]):
        raise Failed(f"{where}: `tier` must be one of {', '.join(TIERS[:3])}, or clean for a change with no "
                     f"must_find (and only then)")
    about = data.get("about", ())
    commit = data[kind]
    return Spec(data["id"], data["repo"], kind, commit, data.get("first", commit), data["tier"],
                tuple([about] if isinstance(about, str) else about), tuple(data.get("must_find", ())),
                tuple(data.get("must_not", ())))


def load_sources(corpus: Path) -> tuple[dict[str, Repository], list[Spec]]:
    data = read_yaml(corpus / "sources.yaml")
    repos = {name: Repository(name, spec["github"], spec["language"], re.compile(spec["source"]),
                              re.compile(spec.get("tests", TESTS)))
             for name, spec in data["repositories"].items()}
    return repos, [_spec(i, case, repos) for i, case in enumerate(data["cases"])]


def obtain(repo: Repository, into: Path, mirrors: str | None, clone_url: str) -> Path | None:
    """The bare repository at `into/<name>.git`: there already, else cloned from a local copy or GitHub."""
    target = into / f"{repo.name}.git"
    if (target / "HEAD").exists():
        return target
    into.mkdir(parents=True, exist_ok=True)
    local = os.path.join(mirrors, repo.github.replace("/", "+")) if mirrors else None
    for candidate in (f"{local}/repo", local) if local else ():
        if os.path.isfile(os.path.join(candidate, "HEAD")):
            git(into, "clone", "--bare", "--quiet", candidate, target.name)
            return target
    url = clone_url.format(repo.github)
    try:
        git(into, "clone", "--bare", "--quiet", url, target.name, timeout=CLONE_TIMEOUT)
        return target
    except (Failed, subprocess.TimeoutExpired) as error:
        where = f"no copy under {mirrors}, and " if mirrors else ""
        print(f"eval: skipping {repo.name} ({repo.github}): {where}`git clone {url}` failed "
              f"({str(error).splitlines()[-1]})", file=sys.stderr)
        return None


@dataclass(frozen=True)
class Built:
    case: dict  # as corpus.yaml holds it
    audit: dict  # as audit.json holds it


def build_fix(path: Path, repo: Repository, spec: Spec, audited: bool = True) -> Built:
    """Base: the fix's parent with its source change, comments as the parent had them. Head: the
    base with those files taken back to the parent (the parent's tree, whole)."""
    fix, parent = resolve(path, spec.commit), resolve(path, f"{spec.first}^")
    paths = changed(path, parent, fix)
    sources = [p for p in paths if repo.source.search(p) and not repo.tests.search(p)]
    if not sources:
        raise Failed(f"{spec.id}: {spec.commit[:12]} changes no source file")
    files: dict[str, tuple[str, str] | None] = {}
    for name in sources:
        new, old = blob(path, fix, name), blob(path, parent, name)
        if new is None:
            files[name] = None
            continue
        content = without_added_comments(read(path, old[1]) if old else "", read(path, new[1]), repo.language)
        stored = git(path, "hash-object", "-w", "--no-filters", "--stdin",
                     stdin=content.encode("utf-8", errors="surrogateescape"))
        files[name] = (new[0], text(stored).strip())
    base = commit_tree(path, with_files(path, parent, files), parent, "Base of a review case\n")
    titles = ", ".join(dict.fromkeys(os.path.basename(s) for s in sources))
    head = commit_tree(path, tree_of(path, parent), base, f"Update {titles}\n")
    git(path, "update-ref", f"refs/eval/{spec.id}", head)
    items = _described(spec, must_find(path, base, head, sources))
    audit = fix_audit(path, repo, spec, fix, parent, base, head, paths, sources) if audited else {}
    return Built(_case(spec, repo, base, head, items, len(sources)), audit)


def _described(spec: Spec, mined: list[dict]) -> list[dict]:
    """The mined items with their descriptions; or, where sources.yaml narrows them (a fix that
    changed more than its bug), its own items, each of which must lie on lines the head changed."""
    if not mined:
        raise Failed(f"{spec.id}: the head changes nothing of the base's source (the fix changed only comments?)")
    if spec.must_find:
        for item in spec.must_find:
            if not any(m["path"] == item["path"] and m["lines"][0] <= item["lines"][1]
                       and item["lines"][0] <= m["lines"][1] for m in mined):
                changed_lines = ", ".join(f"{m['path']} {m['lines']}" for m in mined)
                raise Failed(f"{spec.id}: must_find {item['path']} {item['lines']} is not on lines the head "
                             f"changed ({changed_lines})")
        return [dict(item) for item in spec.must_find]
    if len(spec.about) not in (1, len(mined)):
        raise Failed(f"{spec.id}: {len(mined)} must-find item(s) but {len(spec.about)} `about` texts: give one, "
                     f"or one per item")
    return [{**item, "about": spec.about[n if len(spec.about) > 1 else 0]} for n, item in enumerate(mined)]


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def must_find(path: Path, base: str, head: str, paths: list[str]) -> list[dict]:
    """The head's changed lines of each file, hunks closer than NEARBY lines taken as one item; a
    hunk that only deletes is the two lines around the deletion."""
    items = []
    for name in paths:
        diff = text(git(path, "diff-tree", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-renames",
                        "--inter-hunk-context=0", base, head, "--", name))
        ranges = []
        for match in _HUNK.finditer(diff):
            start, count = int(match[1]), int(match[2] if match[2] is not None else 1)
            ranges.append((max(1, start), start + 1) if count == 0 else (start, start + count - 1))
        merged: list[list[int]] = []
        for first, last in sorted(ranges):
            if merged and first - merged[-1][1] <= NEARBY:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        items += [{"path": name, "lines": span} for span in merged]
    return items


def fix_audit(path: Path, repo: Repository, spec: Spec, fix: str, parent: str, base: str, head: str,
              paths: list[str], sources: list[str]) -> dict:
    """What a test can check offline: every file the fix changed at the parent, the fix, the base
    and the head (blob ids), and the comments of its source files that the parent did not hold, at
    the fix, the base and the head (digests)."""
    files: dict[str, dict] = {}
    for name in paths:
        at = {side: (blob(path, commit, name) or (None, None))[1]
              for side, commit in (("parent", parent), ("fix", fix), ("base", base), ("head", head))}
        entry: dict = {"role": "source" if name in sources else "other", **at}
        if name in sources:
            found = {side: comments(read(path, b), repo.language) if b else set() for side, b in at.items()}
            entry["comments"] = {side: sorted(found[side] - found["parent"]) for side in ("fix", "base", "head")}
        files[name] = entry
    message = text(git(path, "cat-file", "commit", head)).split("\n\n", 1)[1]
    return {"id": spec.id, "kind": "fix", "fix": fix, "parent": parent, "base": base, "head": head,
            "baseParent": parents(path, base), "headParent": parents(path, head),
            "parentTree": tree_of(path, parent), "headTree": tree_of(path, head), "headMessage": message,
            "files": files}


def build_change(path: Path, repo: Repository, spec: Spec) -> Built:
    """A real commit against its first parent, with the items sources.yaml gives (lines of the head)."""
    head = resolve(path, spec.commit)
    base = resolve(path, f"{head}^")
    for place in (*spec.must_find, *spec.must_not):
        if blob(path, head, place["path"]) is None:
            raise Failed(f"{spec.id}: {place['path']} is not in {head[:12]}")
        if "lines" in place:
            length = len(read(path, blob(path, head, place["path"])[1]).splitlines())  # type: ignore[index]
            if place["lines"][1] > length:
                raise Failed(f"{spec.id}: {place['path']} has {length} lines at the head, not {place['lines'][1]}")
    git(path, "update-ref", f"refs/eval/{spec.id}", head)
    audit = {"id": spec.id, "kind": "change", "base": base, "head": head, "headParent": parents(path, head)}
    return Built(_case(spec, repo, base, head, [dict(i) for i in spec.must_find], len(changed(path, base, head))),
                 audit)


def _case(spec: Spec, repo: Repository, base: str, head: str, items: list[dict], files: int) -> dict:
    kind = "clean" if spec.kind == "change" and not items else spec.kind
    tags = [f"language:{repo.language.lower()}", f"tier:{spec.tier}", f"kind:{kind}"]
    tags += ["files:multi"] if files > 1 else []
    return {"id": spec.id, "note": f"{repo.language}, {repo.github}", "repo": repo.path_in_corpus, "base": base,
            "head": head, "tags": tags, "must_find": items, "must_not": [dict(p) for p in spec.must_not]}


def build(path: Path, repo: Repository, spec: Spec, audited: bool = True) -> Built:
    return build_fix(path, repo, spec, audited) if spec.kind == "fix" else build_change(path, repo, spec)


def mine(corpus: Path, mirrors: str | None, clone_url: str) -> int:
    repos, specs = load_sources(corpus)
    built = []
    for spec in specs:
        path = obtain(repos[spec.repo], corpus.parent / "repos", mirrors, clone_url)
        if path is None:
            raise Failed(f"{spec.id}: its repository {spec.repo} is not available to mine from")
        one = build(path, repos[spec.repo], spec)
        wrong = problems(spec.id, one.case["base"], one.case["head"], one.audit)
        if wrong:
            raise Failed("; ".join(wrong))
        built.append(one)
    written = render([b.case for b in built], HEADER)
    _, invalid = load_corpus(written, str(corpus / "corpus.yaml"))
    if invalid:
        raise Failed(f"the corpus made is not valid: {invalid[0].message}")
    (corpus / "corpus.yaml").write_text(written, encoding="utf-8")
    audit = {"version": 1, "cases": [b.audit for b in built]}
    (corpus / "audit.json").write_text(json.dumps(audit, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"eval: {len(built)} case(s) from {len({s.repo for s in specs})} repositories written to "
          f"{corpus / 'corpus.yaml'}")
    return 0


def prepare(corpus: Path, mirrors: str | None, clone_url: str) -> int:
    """Every repository the corpus names, with each case's base and head made (or found) and
    checked against corpus.yaml."""
    repos, specs = load_sources(corpus)
    pinned = {c["id"]: (c["base"], c["head"]) for c in read_yaml(corpus / "corpus.yaml")["cases"]}
    made = skipped = 0
    for name in dict.fromkeys(s.repo for s in specs if s.id in pinned):
        path = obtain(repos[name], corpus.parent / "repos", mirrors, clone_url)
        mine_here = [s for s in specs if s.repo == name and s.id in pinned]
        if path is None:
            skipped += len(mine_here)
            continue
        for spec in mine_here:
            case = build(path, repos[name], spec, audited=False).case
            if (case["base"], case["head"]) != pinned[spec.id]:
                raise Failed(f"{spec.id}: the base and head made here are {case['base']} and {case['head']}, "
                             f"corpus.yaml says {pinned[spec.id][0]} and {pinned[spec.id][1]}")
            made += 1
    print(f"eval: {made} case head(s) ready under {corpus.parent / 'repos'} (refs/eval/<id>)"
          + (f"; {skipped} case(s) skipped: their repository is not available" if skipped else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("mine", "prepare"))
    parser.add_argument("corpus", type=Path, help="the corpus directory, holding sources.yaml")
    parser.add_argument("--mirrors", metavar="DIR", default=os.environ.get("EVAL_MIRRORS") or None,
                        help="local copies of the repositories, <owner>+<name>[/repo] (default: $EVAL_MIRRORS, "
                             "else none)")
    args = parser.parse_args(argv)
    clone_url = os.environ.get("EVAL_CLONE_URL", "https://github.com/{}.git")  # {} is owner/name
    try:
        step = mine if args.step == "mine" else prepare
        return step(args.corpus, args.mirrors, clone_url)
    except (Failed, OSError, KeyError, subprocess.TimeoutExpired) as error:
        print(f"eval: {args.step}: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
