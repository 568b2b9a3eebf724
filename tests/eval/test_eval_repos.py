"""scripts/eval_repos.py: a corpus mined from a repository's fix commits, and its repositories
prepared again elsewhere with the same head commits; a repository that cannot be had is skipped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.eval.corpus import load_corpus

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "eval_repos.py"

SOURCES = """\
repositories:
  calc: {github: octo/calc, language: Python, source: '^src/.*\\.py$'}
  gone: {github: octo/gone, language: Go, source: '\\.go$'}
fixes:
  - {id: calc-zero, repo: calc, commit: FIX}
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def mirror(tmp_path: Path) -> str:
    """octo/calc as a fetched copy: a bug, then its fix (a source line, a test, a changelog line)."""
    repo = tmp_path / "mirrors" / "octo+calc" / "work"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    lines = [f"def f{n}(x):\n    return x\n\n" for n in range(40)]
    (repo / "src").mkdir()
    (repo / "src" / "calc.py").write_text("".join(lines) + "def ratio(a, b):\n    return a / b\n")
    (repo / "CHANGES.md").write_text("# Changes\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    (repo / "src" / "calc.py").write_text("".join(lines) + "def ratio(a, b):\n    return a / b if b else 0.0\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text("def test_zero():\n    assert ratio(1, 0) == 0.0\n")
    (repo / "CHANGES.md").write_text("# Changes\n- ratio by zero\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Fix division by zero in ratio (#12)")
    fix = git(repo, "rev-parse", "HEAD")
    git(repo, "clone", "-q", "--bare", str(repo), str(tmp_path / "mirrors" / "octo+calc" / "repo"))
    return fix


def script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "EVAL_MIRRORS": str(tmp_path / "mirrors"),
           "EVAL_CLONE_URL": f"file://{tmp_path}/nowhere/{{}}.git"}  # GitHub stands for a place that is not there
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


def test_a_fix_becomes_a_case_whose_head_is_made_again_the_same(tmp_path):
    fix = mirror(tmp_path)
    corpus = tmp_path / "eval" / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "sources.yaml").write_text(SOURCES.replace("FIX", fix).replace("  gone:", "  # gone:"))
    done = script(tmp_path, "mine", str(corpus))
    assert done.returncode == 0, done.stderr
    text = (corpus / "corpus.yaml").read_text()
    loaded, problems = load_corpus(text, str(corpus / "corpus.yaml"))
    assert problems == [] and loaded is not None
    [case] = loaded.cases
    assert (case.id, case.repo, case.base) == ("calc-zero", "../repos/calc.git", fix)
    [item] = case.must_find
    assert (item.path, item.lines, item.about) == ("src/calc.py", (122, 122), "Fix division by zero in ratio")
    repo = tmp_path / "eval" / "repos" / "calc.git"
    assert git(repo, "show", f"{case.head}:src/calc.py").endswith("    return a / b")  # the bug is back
    assert git(repo, "show", f"{case.head}:tests/test_calc.py")  # the fix's test stays
    assert git(repo, "rev-parse", "refs/eval/calc-zero") == case.head
    subprocess.run(["rm", "-rf", str(tmp_path / "eval" / "repos")], check=True)
    done = script(tmp_path, "prepare", str(corpus))  # another machine, another day: the same head
    assert done.returncode == 0 and "1 case head(s) ready" in done.stdout
    assert git(repo, "rev-parse", "refs/eval/calc-zero") == case.head


def test_a_repository_neither_copied_nor_cloned_is_skipped_with_its_cases(tmp_path):
    fix = mirror(tmp_path)
    corpus = tmp_path / "eval" / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "sources.yaml").write_text(SOURCES.replace("FIX", fix).replace("  gone:", "  # gone:"))
    assert script(tmp_path, "mine", str(corpus)).returncode == 0
    with (corpus / "sources.yaml").open("a") as sources:
        sources.write(f"  - {{id: gone-case, repo: gone, commit: {'1' * 40}}}\n")
    (corpus / "sources.yaml").write_text((corpus / "sources.yaml").read_text().replace("  # gone:", "  gone:"))
    with (corpus / "corpus.yaml").open("a") as written:
        written.write(f"  - {{id: gone-case, repo: ../repos/gone.git, base: {'1' * 40}, head: {'2' * 40}, "
                      "must_find: []}\n")
    done = script(tmp_path, "prepare", str(corpus))
    assert done.returncode == 0
    assert "eval: skipping gone (octo/gone): no copy under" in done.stderr and "git clone file://" in done.stderr
    assert "1 case head(s) ready" in done.stdout and "1 case(s) skipped" in done.stdout


def test_a_head_that_does_not_come_out_the_same_stops_the_preparation(tmp_path):
    fix = mirror(tmp_path)
    corpus = tmp_path / "eval" / "corpus"
    corpus.mkdir(parents=True)
    (corpus / "sources.yaml").write_text(SOURCES.replace("FIX", fix).replace("  gone:", "  # gone:"))
    assert script(tmp_path, "mine", str(corpus)).returncode == 0
    text = (corpus / "corpus.yaml").read_text()
    head = load_corpus(text, "corpus.yaml")[0].cases[0].head
    (corpus / "corpus.yaml").write_text(text.replace(head, "3" * 40))
    done = script(tmp_path, "prepare", str(corpus))
    assert done.returncode == 1 and f"calc-zero: the revert made here is {head}" in done.stderr
