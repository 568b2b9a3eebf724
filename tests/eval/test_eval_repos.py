"""scripts/eval_repos.py over repositories this test makes (no network, no mirror of this machine):
each kind of case mined, every case checked with git for what its head and base hold (none of the
fix's tests, changelog or comments; a neutral message), the corpus mined again under a hostile git
configuration into the same bytes, made again elsewhere by `prepare`, and the mistakes refused."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.eval.corpus import load_corpus

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "eval_repos.py"
sys.path.insert(0, str(ROOT / "scripts"))

from eval_audit import problems  # noqa: E402

CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}

CALC = """\
# Ratios of two numbers.
def ratio(a, b):
    return a / b


def scale(value, by):
    return value * by
"""
CALC_FIXED = """\
# Ratios of two numbers, zero-safe.
def ratio(a, b):
    # A zero divisor gives 0.0 rather than raising.
    if b == 0:  # the guard
        return 0.0
    return a / b


def scale(value, by):
    return value * by
"""
APP = """\
// Serve requests.
function host(req) {
  const h = req.headers.host
  return "http://" + h
}
"""
APP_FIXED = """\
// Serve requests.
function host(req) {
  /* A request without a Host header
     has no address to give back. */
  const h = req.headers.host
  if (!h) return null // no header, no host
  return "http://" + h
}
"""


def git(repo: Path, *args: str) -> str:
    env = {**CLEAN_ENV, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Dev",
           "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        if text is None:
            (repo / name).unlink()
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def upstream(tmp_path: Path, name: str) -> Path:
    work = tmp_path / "work" / name
    work.mkdir(parents=True)
    git(work, "init", "-q", "-b", "main")
    return work


def publish(tmp_path: Path, work: Path, github: str) -> None:
    """The repository as a local copy under the mirrors folder (`<owner>+<name>/repo`, bare)."""
    git(work, "clone", "-q", "--bare", str(work), str(tmp_path / "mirrors" / github.replace("/", "+") / "repo"))


def make_upstreams(tmp_path: Path) -> dict[str, str]:
    """octo/calc (Python) and octo/web (JavaScript), with fixes that explain themselves in comments,
    tests and changelog lines, a real change with a bug, a clean change, and a comment-only fix."""
    calc = upstream(tmp_path, "calc")
    shas = {"calc-init": commit(calc, {"src/calc.py": CALC, "src/units.py": "METRE = 1\n", "CHANGES.md": "# Changes\n",
                                       "tests/test_calc.py": "def test_ratio():\n    assert ratio(4, 2) == 2\n"},
                                "init")}
    shas["calc-zero"] = commit(calc, {"src/calc.py": CALC_FIXED, "CHANGES.md": "# Changes\n- ratio by zero\n",
                                      "tests/test_calc.py": "def test_zero():\n    assert ratio(1, 0) == 0.0\n"},
                               "Fix division by zero in ratio (#12)")
    rounded = CALC_FIXED.replace("value * by", "round(value * by, 6)")
    shas["calc-units"] = commit(calc, {"src/calc.py": rounded,
                                       "src/units.py": "METRE = 1.0\n", "tests/test_units.py": "def test(): pass\n"},
                                "Fix rounding of scaled units")
    shas["calc-percent"] = commit(calc, {"src/percent.py": "from calc import ratio\n\n\ndef percent(a, b):\n"
                                                           "    return ratio(a, b) * 10\n",
                                         "tests/test_percent.py": "def test(): pass\n"}, "Add percent")
    shas["calc-describe"] = commit(calc, {"src/describe.py": "def describe(a, b):\n    return f'{a}/{b}'\n"},
                                   "Add describe")
    shas["calc-typo"] = commit(calc, {"src/calc.py": rounded.replace("zero-safe", "safe at zero")},
                               "Fix a comment's typo")
    publish(tmp_path, calc, "octo/calc")
    web = upstream(tmp_path, "web")
    shas["web-init"] = commit(web, {"lib/app.js": APP, "test/app.js": "// tests\n"}, "init")
    shas["web-host"] = commit(web, {"lib/app.js": APP_FIXED, "test/app.js": "// tests\nit('no host')\n",
                                    "History.md": "- no Host header\n"}, "fix: a request without Host")
    publish(tmp_path, web, "octo/web")
    return shas


SOURCES = """\
repositories:
  calc: {{github: octo/calc, language: Python, source: '^src/.*\\.py$'}}
  web: {{github: octo/web, language: JavaScript, source: '^lib/.*\\.js$'}}
cases:
  - {{id: calc-zero, repo: calc, fix: {calc-zero}, tier: clear, about: "ratio divides by zero"}}
  - id: calc-units
    repo: calc
    fix: {calc-units}
    tier: subtle
    about: ["scale does not round", "METRE is an int"]
  - id: calc-percent
    repo: calc
    change: {calc-percent}
    tier: clear
    must_find: [{{path: src/percent.py, lines: [5, 5], about: "a percent is times 100, not 10"}}]
  - id: calc-describe
    repo: calc
    change: {calc-describe}
    tier: clean
    must_find: []
    must_not: [{{path: src/describe.py, lines: [1, 2]}}]
  - {{id: web-host, repo: web, fix: {web-host}, tier: subtle, about: "a request without Host throws"}}
"""


@pytest.fixture
def shas(tmp_path: Path) -> dict[str, str]:
    return make_upstreams(tmp_path)


def corpus_dir(tmp_path: Path, shas: dict[str, str], sources: str = SOURCES) -> Path:
    corpus = tmp_path / "eval" / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "sources.yaml").write_text(sources.format(**shas))
    return corpus


def script(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "EVAL_CLONE_URL": f"file://{tmp_path}/nowhere/{{}}.git", **(env or {})}
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--mirrors", str(tmp_path / "mirrors")],
                          capture_output=True, text=True, env=env, timeout=120)


def mined(tmp_path: Path, corpus: Path) -> tuple[dict, dict]:
    done = script(tmp_path, "mine", str(corpus))
    assert done.returncode == 0, done.stderr
    loaded, errors = load_corpus((corpus / "corpus.yaml").read_text(), str(corpus / "corpus.yaml"))
    assert errors == [] and loaded is not None
    audit = json.loads((corpus / "audit.json").read_text())
    return {c.id: c for c in loaded.cases}, {a["id"]: a for a in audit["cases"]}


def test_each_kind_of_case_is_mined_with_its_items_and_tags(tmp_path, shas):
    corpus = corpus_dir(tmp_path, shas)
    cases, _ = mined(tmp_path, corpus)
    assert list(cases) == ["calc-zero", "calc-units", "calc-percent", "calc-describe", "web-host"]
    zero = cases["calc-zero"]
    assert (zero.repo, zero.tags) == ("../repos/calc.git", ("language:python", "tier:clear", "kind:fix"))
    assert [(i.path, i.lines, i.about) for i in zero.must_find] == [("src/calc.py", (2, 3), "ratio divides by zero")]
    units = cases["calc-units"]
    assert [(i.path, i.about) for i in units.must_find] == [("src/calc.py", "scale does not round"),
                                                            ("src/units.py", "METRE is an int")]
    assert "files:multi" in units.tags
    percent = cases["calc-percent"]
    assert (percent.base, percent.head) == (shas["calc-units"], shas["calc-percent"])  # the real commit
    assert percent.tags == ("language:python", "tier:clear", "kind:change", "files:multi")
    describe = cases["calc-describe"]
    assert describe.must_find == () and describe.tags == ("language:python", "tier:clean", "kind:clean")
    assert [(p.path, p.lines) for p in describe.must_not] == [("src/describe.py", (1, 2))]
    repo = tmp_path / "eval" / "repos" / "calc.git"
    assert git(repo, "rev-parse", "refs/eval/calc-zero") == zero.head


# What each fix said in its comments, which neither side of its case may hold.
SAID = {"calc-zero": ("zero divisor", "the guard", "zero-safe"), "calc-units": (),
        "web-host": ("Host header", "no header")}


def test_no_head_or_base_carries_the_fixs_comments_tests_or_changelog(tmp_path, shas):
    corpus = corpus_dir(tmp_path, shas)
    cases, audits = mined(tmp_path, corpus)
    for case in cases.values():  # every case, by git itself
        assert problems(case.id, case.base, case.head, audits[case.id]) == []
        repo = tmp_path / "eval" / "repos" / case.repo.split("/")[-1]
        if audits[case.id]["kind"] != "fix":
            continue
        fix = audits[case.id]["fix"]
        assert git(repo, "rev-parse", f"{case.head}^{{tree}}") == git(repo, "rev-parse", f"{fix}^^{{tree}}")
        assert git(repo, "log", "-1", "--format=%s", case.head).startswith("Update ")
        base_only = git(repo, "diff", "--name-only", f"{fix}^", case.base).split()
        assert base_only and all(p.startswith(("src/", "lib/")) for p in base_only)  # no test, no changelog
        for side in (case.base, case.head):
            text = "\n".join(git(repo, "show", f"{side}:{p}") for p in base_only)
            for said in SAID[case.id]:
                assert said not in text, (case.id, side, said)
    zero = tmp_path / "eval" / "repos" / "calc.git"
    base = cases["calc-zero"].base
    assert "if b == 0:\n        return 0.0" in git(zero, "show", f"{base}:src/calc.py")  # the fix's code stays
    assert "# Ratios of two numbers.\n" in git(zero, "show", f"{base}:src/calc.py")  # as the parent said it
    web = git(tmp_path / "eval" / "repos" / "web.git", "show", f"{cases['web-host'].base}:lib/app.js")
    assert '  if (!h) return null\n  return "http://" + h' in web  # a `//` inside a string is no comment


HOSTILE_CONFIG = """\
[log]
\tshowSignature = true
[i18n]
\tcommitEncoding = ISO-8859-1
\tlogOutputEncoding = ISO-8859-1
[color]
\tui = always
[diff]
\tinterHunkContext = 30
\tnoprefix = true
\tcontext = 9
\talgorithm = patience
[core]
\tautocrlf = true
\tquotePath = true
[commit]
\tgpgSign = true
[gpg]
\tprogram = false
[user]
\tname = Someone Else
\temail = else@example.com
[format]
\tpretty = oneline
"""


def test_mined_twice_once_under_a_hostile_git_configuration_gives_the_same_bytes(tmp_path, shas):
    corpus = corpus_dir(tmp_path, shas)
    mined(tmp_path, corpus)
    first = {name: (corpus / name).read_bytes() for name in ("corpus.yaml", "audit.json")}
    shutil.rmtree(tmp_path / "eval" / "repos")
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text(HOSTILE_CONFIG)
    (home / ".config" / "git" / "config").write_text(HOSTILE_CONFIG)
    hostile = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_AUTHOR_NAME": "Intruder",
               "GIT_COMMITTER_DATE": "2020-02-02T00:00:00+0000", "GIT_CONFIG_PARAMETERS": "'color.ui'='always'",
               "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "diff.noprefix", "GIT_CONFIG_VALUE_0": "true",
               "GIT_DIR": str(tmp_path / "nowhere")}
    done = script(tmp_path, "mine", str(corpus), env=hostile)
    assert done.returncode == 0, done.stderr
    assert {name: (corpus / name).read_bytes() for name in first} == first


def test_prepare_makes_the_same_commits_elsewhere_and_stops_on_a_different_one(tmp_path, shas):
    corpus = corpus_dir(tmp_path, shas)
    cases, _ = mined(tmp_path, corpus)
    shutil.rmtree(tmp_path / "eval" / "repos")
    done = script(tmp_path, "prepare", str(corpus))  # another machine, another day
    assert done.returncode == 0 and "5 case head(s) ready" in done.stdout, done.stderr
    repo = tmp_path / "eval" / "repos" / "calc.git"
    assert git(repo, "rev-parse", "refs/eval/calc-zero") == cases["calc-zero"].head
    text = (corpus / "corpus.yaml").read_text()
    (corpus / "corpus.yaml").write_text(text.replace(cases["calc-zero"].head, "3" * 40))
    done = script(tmp_path, "prepare", str(corpus))
    assert done.returncode == 1 and "calc-zero: the base and head made here are" in done.stderr


def test_a_repository_neither_copied_nor_cloned_is_skipped_with_its_cases(tmp_path, shas):
    corpus = corpus_dir(tmp_path, shas)
    mined(tmp_path, corpus)
    sources = SOURCES.format(**shas).replace("repositories:\n", "repositories:\n  gone: {github: octo/gone, "
                                             "language: Go, source: '\\.go$'}\n")
    (corpus / "sources.yaml").write_text(sources + f"  - {{id: gone-case, repo: gone, fix: {'1' * 40}, tier: clear, "
                                                   "about: x}\n")
    with (corpus / "corpus.yaml").open("a") as written:
        written.write(f"  - {{id: gone-case, repo: ../repos/gone.git, base: {'1' * 40}, head: {'2' * 40}, "
                      "must_find: []}\n")
    done = script(tmp_path, "prepare", str(corpus))
    assert done.returncode == 0, done.stderr
    assert "eval: skipping gone (octo/gone): no copy under" in done.stderr and "git clone file://" in done.stderr
    assert "5 case head(s) ready" in done.stdout and "1 case(s) skipped" in done.stdout


@pytest.mark.parametrize("case, message", [
    ("{{id: typo, repo: calc, fix: {calc-typo}, tier: clear, about: x}}",
     "typo: the head changes nothing of the base's source (the fix changed only comments?)"),
    ("{{id: narrow, repo: calc, fix: {calc-zero}, tier: clear, must_find: [{{path: src/calc.py, lines: [9, 9], "
     "about: x}}]}}", "narrow: must_find src/calc.py [9, 9] is not on lines the head changed (src/calc.py [2, 3])"),
    ("{{id: two, repo: calc, fix: {calc-units}, tier: clear, about: [a, b, c]}}",
     "two: 2 must-find item(s) but 3 `about` texts"),
    ("{{id: loose, repo: calc, fix: {calc-zero}, tier: easy, about: x}}", "cases[0] (loose): `tier` must be one of"),
    ("{{id: odd, repo: calc, fix: {calc-zero}, tier: clear, about: x, note: y}}",
     "cases[0] (odd): unknown field(s) note"),
    ("{{id: bare, repo: calc, fix: {calc-zero}, tier: clear}}", "cases[0] (bare): missing about"),
    ("{{id: clean, repo: calc, change: {calc-describe}, tier: subtle, must_find: []}}",
     "or clean for a change with no must_find (and only then)"),
])
def test_mistakes_in_sources_stop_the_mining_with_the_case_named(tmp_path, shas, case, message):
    sources = SOURCES.split("cases:\n")[0] + "cases:\n  - " + case + "\n"
    corpus = corpus_dir(tmp_path, shas, sources)
    done = script(tmp_path, "mine", str(corpus))
    assert done.returncode == 1 and message in done.stderr, done.stderr
    assert not (corpus / "corpus.yaml").exists()


def test_the_script_reads_no_mirror_unless_told(tmp_path, shas):
    corpus = corpus_dir(tmp_path, shas)
    env = {**os.environ, "EVAL_CLONE_URL": f"file://{tmp_path}/nowhere/{{}}.git"}
    env.pop("EVAL_MIRRORS", None)
    done = subprocess.run([sys.executable, str(SCRIPT), "mine", str(corpus)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 1
    assert re.search(r"skipping calc \(octo/calc\): `git clone file://\S+/nowhere/octo/calc.git` failed", done.stderr)
