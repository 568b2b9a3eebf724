"""Git for scripts/eval_repos.py, by plumbing only and hermetic: no user or system configuration
read, no GIT_* variable of the caller's passed on, the settings a repository's own config file could
hold that change a commit or a read pinned, and commits made with a fixed author, committer and
date. So a user's `log.showSignature`, `i18n.commitEncoding`, `color.ui=always` or `diff.*` settings
change neither the commits made nor what is read back.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

IDENT = {"GIT_AUTHOR_NAME": "Reviewer eval", "GIT_AUTHOR_EMAIL": "eval@reviewer.invalid",
         "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000", "GIT_COMMITTER_NAME": "Reviewer eval",
         "GIT_COMMITTER_EMAIL": "eval@reviewer.invalid", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000"}
# Settings a repository's own config file could hold that would change a commit or a read.
PINNED = ("core.autocrlf=false", "core.safecrlf=false", "core.quotePath=false", "i18n.commitEncoding=UTF-8",
          "commit.gpgSign=false", "diff.noprefix=false", "color.ui=never")
ZERO = "0" * 40


class Failed(Exception):
    """A git command failed, or what it gave cannot be used: the step stops with this message."""


def hermetic(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every git command: the caller's without any GIT_* variable (GIT_DIR,
    GIT_CONFIG_PARAMETERS, an author of theirs), no global or system configuration, C locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C", **(extra or {})}


def git(repo: Path | str, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None,
        timeout: float = 300) -> bytes:
    pinned = [part for setting in PINNED for part in ("-c", setting)]
    done = subprocess.run(["git", "-C", str(repo), *pinned, *args], capture_output=True, input=stdin,
                          timeout=timeout, env=hermetic(env))
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip() or str(done.returncode)
        raise Failed(f"git {' '.join(args[:3])}: {said}")
    return done.stdout


def text(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def resolve(path: Path, ref: str) -> str:
    return text(git(path, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")).strip()


def changed(path: Path, old: str, new: str) -> list[str]:
    out = text(git(path, "diff-tree", "-r", "-z", "--no-renames", "--name-only", old, new))
    return [p for p in out.split("\0") if p]


def blob(path: Path, commit: str, name: str) -> tuple[str, str] | None:
    """(mode, blob id) of `name` at `commit`, or None when it has no such file."""
    listed = text(git(path, "ls-tree", "-z", commit, "--", name)).rstrip("\0")
    if not listed:
        return None
    meta, _, _ = listed.partition("\t")
    mode, _, blob_id = meta.split()
    return mode, blob_id


def read(path: Path, blob_id: str) -> str:
    return text(git(path, "cat-file", "blob", blob_id))


def tree_of(path: Path, commit: str) -> str:
    return text(git(path, "rev-parse", f"{commit}^{{tree}}")).strip()


def commit_tree(path: Path, tree: str, parent: str, message: str) -> str:
    return text(git(path, "commit-tree", tree, "-p", parent, env=IDENT, stdin=message.encode())).strip()


def with_files(path: Path, commit: str, files: dict[str, tuple[str, str] | None]) -> str:
    """The tree of `commit` with `files` (path → (mode, blob id), or None to remove) put in."""
    with tempfile.TemporaryDirectory(prefix="eval-index-") as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
        git(path, "read-tree", commit, env=env)
        records = []
        for name, entry in sorted(files.items()):
            mode, blob_id = entry or ("0", ZERO)  # mode 0: take the file out
            records.append(f"{mode} {blob_id}\t{name}\0")
        git(path, "update-index", "-z", "--index-info", env=env,
            stdin="".join(records).encode("utf-8", errors="surrogateescape"))
        return text(git(path, "write-tree", env=env)).strip()


def parents(path: Path, commit: str) -> list[str]:
    return text(git(path, "rev-list", "--parents", "-n", "1", commit)).split()[1:]
