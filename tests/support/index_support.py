"""`reviewer context` over a two-commit repository, as the index's resolution tests read it: the
pieces retrieval returns for a change from `base` to `head` (path → text), and their definitions
and callers in the order retrieval ranked them."""

from __future__ import annotations

import json
from pathlib import Path

from bot.commands.cli import main
from tests.plan.test_plan_cli import Repo


def context_of(capsys, tmp_path: Path, base: dict[str, str], head: dict[str, str]) -> list[dict]:
    repo = Repo(tmp_path / "repo")
    repo.commit("base", base)
    repo.git("checkout", "-q", "-b", "change")
    repo.commit("change", head)
    assert main(["context", "--repo", str(repo.path), "--base", "main", "--head", "change", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["context"]


def callers(context: list[dict]) -> list[tuple[str, str]]:
    """(path, calling function) of each caller piece."""
    return [(c["path"], c["symbol"]) for c in context if c["kind"] == "caller"]


def definitions(context: list[dict]) -> list[tuple[str, int]]:
    """(path, first line) of each definition piece."""
    return [(c["path"], c["startLine"]) for c in context if c["kind"] == "definition"]
