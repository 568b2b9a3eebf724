"""Support for the tests of `reviewer review` (bot/local/): real git repositories made in a test's
temporary directory, the real command run in a thread (the model double answers on the test's
event loop meanwhile), and the admin file that declares the double as the provider."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from bot.commands.cli import main
from tests.support.chat_double import ChatDouble
from tests.support.github_double import Commit, Repo
from tests.support.review_support import admin_yaml

AWS_KEY = "AKIA" + "Q3EGRT5JXMPLVW4Z"  # detect-secrets' AWS pattern; split so no scanner flags this file


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    """`files` laid over the work tree (None deletes a path), committed; the new commit's id."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def new_repo(path: Path, files: dict[str, str | None], branch: str = "main") -> str:
    """A repository at `path` whose `branch` holds `files`; its first commit's id."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", branch)
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    return commit(path, files, "init")


def admin_file(tmp_path: Path, chat: ChatDouble, extra: str = "") -> str:
    path = tmp_path / "admin.yaml"
    path.write_text(admin_yaml(chat) + extra)
    return str(path)


async def reviewer(capsys, *args: str) -> tuple[int, str, str]:
    """`reviewer review ARGS` in this process, in a thread; (exit code, stdout, stderr)."""
    code = await asyncio.to_thread(main, ["review", *args])
    out, err = capsys.readouterr()
    return code, out, err


def listing(*roots: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under `roots` (hidden ones and .git included) with its size and
    modification time: what a run must leave as it was."""
    found: dict[str, tuple[int, int]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in [*dirs, *files]:
                path = os.path.join(folder, name)
                stat = os.lstat(path)
                found[path] = (stat.st_size if name in files else 0, stat.st_mtime_ns if name in files else 0)
    return found


def mirror(double_repo: Repo, path: Path) -> None:
    """Every commit and branch of the local repository at `path` into the GitHub double's
    repository, under the same commit ids: the double then serves the commits a GitHub Actions job
    checked out (its diffs are the double's own, which place review comments as git's hunks do for
    the small changes of these tests)."""
    for sha in git(path, "rev-list", "--all", "--reverse", "--topo-order").split():
        if sha in double_repo.commits:
            continue
        parents, author, date, message = git(path, "log", "-1", "--format=%P%x00%an%x00%aI%x00%B", sha).split("\0", 3)
        names = [n for n in git(path, "ls-tree", "-r", "-z", "--name-only", sha).split("\0") if n]
        files = {n: subprocess.run(["git", "-C", str(path), "cat-file", "blob", f"{sha}:{n}"], check=True,
                                   capture_output=True).stdout.decode() for n in names}
        double_repo.commits[sha] = Commit(sha, files, tuple(parents.split()), message.strip(), author, date)
    for line in git(path, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads").splitlines():
        branch, sha = line.split()
        double_repo.branches[branch] = sha
