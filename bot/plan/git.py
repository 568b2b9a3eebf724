"""What `reviewer plan` asks git: refs, the merge base, the tree there, the changed paths, blobs.

Every call is `git -C REPO …` with `-z` where paths are listed (any byte but NUL may be in a
path), refs resolved to commit ids once and then used as ids, and a failure raised as GitError
with git's own words. No command here changes the repository.
"""

from __future__ import annotations

import os
import re
import subprocess

from bot.plan.pr import GitFacts

TIMEOUT = 120  # seconds; a local repository answers in far less
# Settings of a user's or a repository's git configuration that would change what is read back here
# (a signature before a log line, another encoding, colour, another diff's prefixes, blank context
# lines, joined or reshaped hunks): each pinned to git's default on every call, so a review reads a
# change as GitHub shows it whoever runs it.
PINNED = ("core.quotePath=off", "log.showSignature=false", "i18n.logOutputEncoding=UTF-8", "color.ui=never",
          "diff.noprefix=false", "diff.mnemonicPrefix=false", "diff.suppressBlankEmpty=false", "diff.relative=false",
          "diff.interHunkContext=0", "diff.algorithm=myers", "diff.indentHeuristic=true", "diff.context=3")


class GitError(RuntimeError):
    pass


def git(repo: str, *args: str) -> bytes:
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        pinned = [part for setting in PINNED for part in ("-c", setting)]
        done = subprocess.run(["git", "-C", repo, *pinned, *args], capture_output=True, env=env, timeout=TIMEOUT,
                              check=False)
    except FileNotFoundError:
        raise GitError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"`git {' '.join(args)}` took longer than {TIMEOUT} s") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise GitError(f"`git {' '.join(args)}` failed: {said}")
    return done.stdout


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def check_repository(repo: str) -> None:
    if not os.path.isdir(repo):
        raise GitError(f"{repo}: no such directory")
    try:
        git(repo, "rev-parse", "--git-dir")
    except GitError as exc:  # git's first line: below a mount point it adds one on the boundary it stopped at
        raise GitError(str(exc).splitlines()[0]) from None


def resolve(repo: str, ref: str) -> str:
    """The commit id of `ref`; a ref that looks like an option is refused, never passed on."""
    if not ref or ref.startswith("-"):
        raise GitError(f"{ref!r} is not a git ref")
    try:
        return _text(git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")).strip()
    except GitError:
        raise GitError(f"{ref!r} does not name a commit in {repo}") from None


def default_base(repo: str, candidates: tuple[str, ...] = ("origin/HEAD", "main")) -> str:
    """The first of `candidates` that names a commit, else the last one (whose error then names
    it). docs/plan.md: `origin/HEAD`, else `main`; `reviewer review` adds `master`."""
    for ref in candidates[:-1]:
        try:
            resolve(repo, ref)
            return ref
        except GitError:
            continue
    return candidates[-1]


def merge_base(repo: str, base: str, head: str) -> str:
    try:
        return _text(git(repo, "merge-base", base, head)).strip()
    except GitError:
        raise GitError(f"{base[:12]} and {head[:12]} have no merge base") from None


def list_tree(repo: str, commit: str) -> frozenset[str]:
    return frozenset(_text(p) for p in git(repo, "ls-tree", "-r", "-z", "--name-only", commit).split(b"\0") if p)


def changed_paths(repo: str, base: str, head: str) -> list[str]:
    """Every changed path in git's order; deleted ones count, renamed ones under the new path."""
    tokens = git(repo, "diff", "--name-status", "-z", "-M", base, head).split(b"\0")
    paths: list[str] = []
    index = 0
    while index < len(tokens) and tokens[index]:
        status = tokens[index][:1]
        if status in (b"R", b"C"):
            paths.append(_text(tokens[index + 2]))
            index += 3
        else:
            paths.append(_text(tokens[index + 1]))
            index += 2
    return paths


_NUMSTAT = re.compile(rb"^(\d+|-)\t(\d+|-)\t(.*)$", re.DOTALL)


def line_counts(repo: str, base: str, head: str) -> tuple[int, int]:
    """(lines added, lines deleted), binary files counting none."""
    added = deleted = 0
    tokens = iter(git(repo, "diff", "--numstat", "-z", "-M", base, head).split(b"\0"))
    for token in tokens:
        match = _NUMSTAT.match(token)
        if not match:
            continue
        added += int(match[1]) if match[1] != b"-" else 0
        deleted += int(match[2]) if match[2] != b"-" else 0
        if not match[3]:  # a rename: the old and new paths follow as their own tokens
            next(tokens, None)
            next(tokens, None)
    return added, deleted


def read_blob(repo: str, commit: str, path: str) -> bytes:
    return git(repo, "cat-file", "blob", f"{commit}:{path}")


def head_facts(repo: str, base: str, head: str) -> GitFacts:
    sha, author, date, message = _text(git(repo, "log", "-1", "--format=%H%x00%an%x00%aI%x00%B", head)).split("\0", 3)
    commits = int(_text(git(repo, "rev-list", "--count", f"{base}..{head}")).strip() or 0)
    added, deleted = line_counts(repo, base, head)
    return GitFacts(sha.strip(), message, author, date, commits, added, deleted)


_REMOTE = re.compile(r"[:/]([^/:]+)/([^/]+?)(?:\.git)?/?$")


def origin_full_name(repo: str) -> str | None:
    """`owner/name` of the `origin` remote (https, ssh or scp-like URL), None without one."""
    try:
        url = _text(git(repo, "remote", "get-url", "origin")).strip()
    except GitError:
        return None
    match = _REMOTE.search(url)
    return f"{match[1]}/{match[2]}" if match else None
