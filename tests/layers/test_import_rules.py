"""The import rules of .importlinter hold, and a change that breaks one fails the check.

`make test` runs `lint-imports` on the checkout; here it runs on a copy of bot/ with one bad import
added, so that a rule that could not fail (a misspelt layer, a package the graph never sees) is
caught. Each case is an import that docs/architecture.md forbids.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def copy_of_checkout(tmp_path: Path) -> Path:
    """bot/, the contracts and the contract type they name, nothing else."""
    root = tmp_path / "checkout"
    shutil.copytree(ROOT / "bot", root / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", root / ".importlinter")
    (root / "tests" / "support").mkdir(parents=True)
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "support" / "__init__.py").write_text("")
    shutil.copy(ROOT / "tests" / "support" / "import_contracts.py", root / "tests" / "support")
    return root


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def add_import(root: Path, module: str, line: str) -> None:
    path = root / module
    text = path.read_text()
    head, sep, rest = text.partition("from __future__ import annotations\n")
    path.write_text(head + sep + line + "\n" + rest if sep else line + "\n" + text)


def test_the_checkout_keeps_every_rule(tmp_path):
    result = lint(copy_of_checkout(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 5 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(("module", "line", "contract", "named"), [
    # the ground floor importing the top: a layer broken
    ("bot/documents/pointers.py", "import bot.server.app  # noqa", "Layers", "bot.documents.pointers -> bot.server.app"),
    # the store importing the pipeline above it
    ("bot/store/model.py", "import bot.pipeline.post  # noqa", "Layers", "bot.store.model -> bot.pipeline.post"),
    # a database driver outside bot/store
    ("bot/reviews/diff.py", "import sqlite3  # noqa", "Database drivers", "bot.reviews.diff -> sqlite3"),
    # aiohttp's server half outside bot/server
    ("bot/github/client.py", "from aiohttp import web  # noqa", "aiohttp.web", "bot.github.client -> aiohttp.web"),
    # the pure review feature importing the engine above it, or the GitHub client below it
    ("bot/reviews/life.py", "import bot.engine.providers  # noqa", "Layers", "bot.reviews.life -> bot.engine.providers"),
    ("bot/reviews/life.py", "import bot.github.client  # noqa", "The review feature is pure",
     "bot.reviews.life -> bot.github.client"),
    # two modules of one package importing each other: the pipeline's services and its review step
    ("bot/pipeline/services.py", "import bot.pipeline.review  # noqa", "No import cycle",
     "No cycles are allowed in bot.pipeline"),
    # two packages of one layer importing each other: the engine reads learnings, not the reverse
    ("bot/learnings/model.py", "import bot.engine.engine  # noqa", "No import cycle", "No cycles are allowed in bot."),
])
def test_a_change_that_breaks_a_rule_fails_the_check(tmp_path, module, line, contract, named):
    root = copy_of_checkout(tmp_path)
    add_import(root, module, line)
    result = lint(root)
    assert result.returncode != 0, result.stdout
    # an import up the layers also closes a cycle between packages: both contracts say so
    upward = contract == "Layers"
    assert f"{2 if upward else 1} broken" in result.stdout, result.stdout
    broken = result.stdout.split("Broken contracts", 1)[1]
    assert contract in broken
    assert named in broken
