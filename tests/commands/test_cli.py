"""The `reviewer` process as a shell sees it: a reader that goes away early (`| head -1`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.commands.cli import EXIT_BROKEN_PIPE

CONFIG = """\
rules:
  - id: app
    rule: Check the app.
    paths: ["src/**"]
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A branch `feature` of 200 changed files onto `main`: a plan of several kilobytes."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "ann@example.com")
    git(path, "config", "user.name", "Ann Dev")
    (path / ".reviewer.yaml").write_text(CONFIG)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "init")
    git(path, "checkout", "-q", "-b", "feature")
    (path / "src").mkdir()
    for index in range(200):
        (path / "src" / f"module_{index:03d}.py").write_text("x = 1\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "feature")
    return path


def run_into_closed_pipe(*argv: str) -> subprocess.CompletedProcess:
    """Run `reviewer` with stdout a pipe whose reader is already gone: every write fails with EPIPE,
    whether the output fits in the pipe's buffer or not (no race with a real `head`)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "bot", *argv], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(write_end)


def test_plan_into_a_closed_pipe_exits_141_without_a_traceback(repo: Path) -> None:
    result = run_into_closed_pipe("plan", "--repo", str(repo), "--base", "main")
    assert result.returncode == EXIT_BROKEN_PIPE == 141
    assert result.stderr == ""


def test_schema_into_a_closed_pipe_exits_141_without_a_traceback() -> None:
    result = run_into_closed_pipe("schema", "repo-config")
    assert result.returncode == EXIT_BROKEN_PIPE
    assert result.stderr == ""


def test_plan_piped_to_head_prints_the_first_line(repo: Path) -> None:
    """The shell pipeline of the report: the first line arrives, and nothing is written to stderr."""
    command = f'"{sys.executable}" -m bot plan --repo "{repo}" --base main | head -1'
    result = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout.startswith("Plan for HEAD") and result.stdout.count("\n") == 1
    assert result.stderr == ""


def test_plan_to_an_open_pipe_still_exits_0(repo: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "bot", "plan", "--repo", str(repo), "--base", "main"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "module_199.py" in result.stdout
