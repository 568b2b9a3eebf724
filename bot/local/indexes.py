"""Where a local review keeps each repository's index, and the index's part in a review (I/O).

The index is built at the change's merge base and kept between runs, so that the next review of
the same repository only reads the files that changed. Two places: `in_cache()` — outside the
repository, under `$XDG_CACHE_HOME/reviewer/index/` (`reviewer review`, which writes nothing into
the repository) — and `in_git_dir()` — `.git/reviewer/index.sqlite3`, the place `reviewer context`
keeps (`reviewer eval`). One index holds one commit at a time: reviews of one repository take turns
at it (a thread lock for the reviews of one process, a file lock for other processes), each moving
it to its own merge base.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from bot.config.admin import AdminConfig
from bot.config.model import IndexLimits
from bot.engine.index_context import changed_files
from bot.engine.lookups import RepositoryLookups
from bot.engine.request import DEFAULT_BUDGETS
from bot.index.build import sync
from bot.index.gitsource import GitSnapshot
from bot.index.queries import Answer, HeadView
from bot.index.retrieve import Retrieval, retrieve
from bot.index.store import IndexStore
from bot.plan import git
from bot.reviews.diff import read_patches
from bot.store.index import open_sqlite_index

T = TypeVar("T")
INDEX_NAME = "local"  # the index's name in its file, shared with `reviewer context`


def cache_root(environ: dict[str, str] | None = None) -> str:
    """`$XDG_CACHE_HOME/reviewer`, else `~/.cache/reviewer` (the XDG base directory default)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "reviewer")


def _git_dir(repo: str) -> str:
    return git.git(repo, "rev-parse", "--absolute-git-dir").decode().strip()


def _common_dir(repo: str) -> str:
    """The repository's own git directory, shared by its worktrees."""
    common = git.git(repo, "rev-parse", "--git-common-dir").decode().strip()
    return os.path.realpath(common if os.path.isabs(common) else os.path.join(repo, common))


class Indexes:
    """Each repository's index file, and the lock its reviews take turns under."""

    def __init__(self, place: Callable[[str], str]) -> None:
        self._place = place
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @classmethod
    def in_cache(cls, root: str | None = None) -> Indexes:
        """`<root>/index/<digest of the repository's git directory>.sqlite3` (root: cache_root())."""
        def place(repo: str) -> str:
            digest = hashlib.sha256(_common_dir(repo).encode("utf-8", errors="surrogateescape")).hexdigest()[:24]
            return os.path.join(root or cache_root(), "index", f"{digest}.sqlite3")
        return cls(place)

    @classmethod
    def in_git_dir(cls) -> Indexes:
        """`<git dir>/reviewer/index.sqlite3`, `reviewer context`'s index."""
        return cls(lambda repo: os.path.join(_git_dir(repo), "reviewer", "index.sqlite3"))

    def file(self, repo: str) -> str:
        return self._place(repo)

    @contextlib.contextmanager
    def held(self, repo: str) -> Iterator[str]:
        """The index file of `repo`, its folder made, held against other reviews of `repo`."""
        path = self._place(repo)
        with self._guard:
            lock = self._locks.setdefault(path, threading.Lock())
        with lock:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            with open(path + ".lock", "a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    yield path
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)


def retrieval(indexes: Indexes, repo: str, merge_base: str, head_sha: str, patches: list[dict],
              admin: AdminConfig | None, ignore: Sequence[str],
              ignored: Sequence[str]) -> tuple[Retrieval, RepositoryLookups]:
    """What the index retrieves for the change, and the lookups the model may ask for (the changed
    files at the head, the rest from the index at the merge base). Raises OSError, StoreError or
    git.GitError: the index helps a review and never stops it, so the caller goes on without it."""
    changed = [e["filename"] for e in patches if e.get("status") != "removed"]
    texts = {p: d.decode("utf-8", errors="replace") for p, d in GitSnapshot(repo, head_sha).read(changed).items()}
    limits = admin.index_limits if admin is not None else IndexLimits()

    def at_merge_base(work: Callable[[IndexStore], T]) -> T:
        """`work` over the index at this change's merge base: another review of the repository may
        have moved it to its own merge base meanwhile."""
        with indexes.held(repo) as path, open_sqlite_index(path, INDEX_NAME) as store:
            if store.commit() != merge_base:
                sync(store, GitSnapshot(repo, merge_base), limits=limits, ignore=ignore)
            return work(store)

    async def read(work: Callable[[IndexStore], Answer]) -> Answer:
        return await asyncio.to_thread(at_merge_base, work)

    changes = changed_files(read_patches(patches), texts)
    found = at_merge_base(lambda store: retrieve(store, changes, DEFAULT_BUDGETS.index))
    return found, RepositoryLookups(read, HeadView.of(patches, texts, ignored))
