"""Commits as whole file trees, their ancestry and their diffs: the git the double's API serves.

Hashes are real git object hashes of the text (blobs) so that `sha`s look and behave like GitHub's;
commit hashes include the parents, so two commits with the same tree still differ.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import deque
from dataclasses import dataclass, field


def blob_sha(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def tree_sha(entries: dict[str, str]) -> str:
    """A stable hash of a whole tree (path -> text), standing in for git's tree object hash."""
    digest = hashlib.sha1(b"tree")
    for path in sorted(entries):
        digest.update(path.encode() + b"\0" + blob_sha(entries[path]).encode())
    return digest.hexdigest()


@dataclass
class Commit:
    sha: str
    files: dict[str, str]  # path -> text: the whole tree at this commit
    parents: tuple[str, ...]
    message: str
    author: str
    date: str

    @property
    def tree_sha(self) -> str:
        return tree_sha(self.files)


def commit_sha(files: dict[str, str], parents: tuple[str, ...], message: str, date: str) -> str:
    digest = hashlib.sha1(b"commit")
    digest.update(tree_sha(files).encode())
    for parent in parents:
        digest.update(parent.encode())
    digest.update(message.encode() + date.encode())
    return digest.hexdigest()


def ancestors(commits: dict[str, Commit], sha: str) -> dict[str, int]:
    """Every commit reachable from `sha` (itself included), with its distance."""
    seen = {sha: 0}
    queue = deque([sha])
    while queue:
        current = queue.popleft()
        for parent in commits[current].parents:
            if parent not in seen:
                seen[parent] = seen[current] + 1
                queue.append(parent)
    return seen


def merge_base(commits: dict[str, Commit], base: str, head: str) -> str | None:
    """The common ancestor nearest to `head`, as `git merge-base` finds it for simple histories."""
    from_base = ancestors(commits, base)
    from_head = ancestors(commits, head)
    common = [sha for sha in from_head if sha in from_base]
    if not common:
        return None
    return min(common, key=lambda sha: (from_head[sha] + from_base[sha], from_head[sha]))


@dataclass
class FileDiff:
    path: str
    status: str  # added | removed | modified | renamed
    previous_path: str | None
    sha: str  # blob of the new side (of the old side for a removed file)
    additions: int
    deletions: int
    patch: str
    right_lines: set[int] = field(default_factory=set)  # new-side lines a review comment may target
    left_lines: set[int] = field(default_factory=set)

    @property
    def patch_lines(self) -> int:
        return len(self.patch.splitlines())


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _file_diff(path: str, old: str | None, new: str | None, status: str, previous: str | None) -> FileDiff:
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = (new or "").splitlines(keepends=True)
    body = list(difflib.unified_diff(old_lines, new_lines, n=3))[2:]  # GitHub's patch has no ---/+++ header
    patch = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body)
    diff = FileDiff(path, status, previous, blob_sha(new if new is not None else old or ""),
                    sum(1 for line in body if line.startswith("+")),
                    sum(1 for line in body if line.startswith("-")), patch.rstrip("\n"))
    for line in body:
        m = _HUNK.match(line)
        if m:
            old_start, old_len = int(m[1]), int(m[2] if m[2] is not None else 1)
            new_start, new_len = int(m[3]), int(m[4] if m[4] is not None else 1)
            diff.left_lines |= set(range(old_start, old_start + old_len))
            diff.right_lines |= set(range(new_start, new_start + new_len))
    return diff


def diff_trees(old: dict[str, str], new: dict[str, str]) -> list[FileDiff]:
    """Changed files from `old` to `new` in path order; an exact move is a rename, as GitHub shows it."""
    removed = {p: old[p] for p in old if p not in new}
    added = {p: new[p] for p in new if p not in old}
    renamed: dict[str, str] = {}  # new path -> old path
    by_content = {}
    for path, text in removed.items():
        by_content.setdefault(text, []).append(path)
    for path, text in sorted(added.items()):
        if by_content.get(text):
            renamed[path] = by_content[text].pop(0)
    gone = set(renamed.values())
    out = []
    for path in sorted(set(old) | set(new)):
        if path in renamed:
            out.append(_file_diff(path, old[renamed[path]], new[path], "renamed", renamed[path]))
        elif path in gone:
            continue
        elif path not in old:
            out.append(_file_diff(path, None, new[path], "added", None))
        elif path not in new:
            out.append(_file_diff(path, old[path], None, "removed", None))
        elif old[path] != new[path]:
            out.append(_file_diff(path, old[path], new[path], "modified", None))
    return out
