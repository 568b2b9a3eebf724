"""The repository index on the server: kept at the default branch, read for each review (I/O).

At review time the index of the repository is brought to the pull request's base commit when
that is on the default branch and past the indexed commit (it only moves forward: one compare
call); a push or an installation brings it to the default branch's head. An update is one
recursive tree call, then only the blobs whose id changed since the last build are read, four
at a time and at most `reads_per_update` per update, so that a large first build is spread over
several updates within GitHub's rate limits.
Retrieval runs on the changed files read at the head, and so do the lookups the model may ask for
(bot/engine/lookups.py): the same head texts, the index read in a thread per lookup. `enabled: false` (repository or admin)
deletes the repository's index. Store work runs in a thread, one update of a repository at a
time, so that the event loop keeps serving webhooks while a large repository is parsed; the store
is SQLite by default, or PostgreSQL (bot/store/index/: `sqlite_stores`, `postgres_stores`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TypeVar

from bot import telemetry
from bot.config.admin import AdminConfig
from bot.config.layering import effective_config
from bot.config.model import EffectiveConfig, IndexLimits
from bot.engine.index_context import changed_files
from bot.engine.lookups import RepositoryLookups
from bot.github import GitHubClient, read_file, tree
from bot.index.build import DEFAULT_LIMITS, BuildReport, Entry, Limits, plan_update, sync
from bot.index.queries import HeadView
from bot.index.retrieve import Retrieval, retrieve
from bot.index.store import IndexStore
from bot.pipeline.gather import read_paths
from bot.plan.config_files import load_config_file, present_names
from bot.reviews.diff import FilePatch, read_patches

logger = logging.getLogger("reviewer.index")
T = TypeVar("T")

HEAD_READ_LIMIT = 50  # changed files read at the head for retrieval; the rest go without


@dataclass(frozen=True)
class _Prefetched:
    """A snapshot whose changed blobs were read from GitHub beforehand (sync itself is not async)."""

    commit: str
    listed: tuple[Entry, ...]
    blobs: Mapping[str, bytes]

    def entries(self) -> Sequence[Entry]:
        return self.listed

    def read(self, paths: Sequence[str]) -> Mapping[str, bytes]:
        return {p: self.blobs[p] for p in paths if p in self.blobs}


StoreOpener = Callable[[str], AbstractContextManager[IndexStore]]  # repository → its index, opened


@dataclass
class RepositoryIndexes:
    """The indexes of every repository this server reviews, in the store `open_store` opens."""

    open_store: StoreOpener
    reads_per_update: int = 1000  # contents reads one update may make; a larger build goes on next time
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def _lock(self, repo: str) -> asyncio.Lock:
        return self._locks.setdefault(repo, asyncio.Lock())

    def _with_store(self, repo: str, work: Callable[[IndexStore], T]) -> Awaitable[T]:
        """`work(store)` in a thread, with the repository's index open for it."""
        def run() -> T:
            with self.open_store(repo) as store:
                return work(store)
        return asyncio.to_thread(run)

    async def read(self, repo: str, work: Callable[[IndexStore], T]) -> T:
        """`work(store)` over `repo`'s index, in a thread (a model's lookups)."""
        return await self._with_store(repo, work)

    async def commit(self, repo: str) -> str | None:
        """The commit `repo`'s index is at (None: no index)."""
        return await self._with_store(repo, lambda store: store.commit())

    async def delete(self, repo: str) -> None:
        async with self._lock(repo):
            await self._with_store(repo, _drop)

    async def update(self, gh: GitHubClient, repo: str, commit: str, ignore: Sequence[str],
                     limits: Limits = DEFAULT_LIMITS) -> BuildReport:
        """Bring `repo`'s index to `commit`, reading only the blobs that changed."""
        owner, name = repo.split("/", 1)
        async with self._lock(repo):
            with telemetry.span("index update", repo=repo, commit=commit) as span:
                listed = await _list_tree(gh, owner, name, commit)
                stored = await self._with_store(repo, lambda store: store.blobs())
                wanted = plan_update(stored, listed, limits, ignore).read[: self.reads_per_update]
                texts = await read_paths(gh, owner, name, [e.path for e in wanted], commit)
                blobs = {p: t.encode("utf-8") for p, t in texts.items()}
                snapshot = _Prefetched(commit, tuple(listed), blobs)
                report = await self._with_store(repo, lambda store: sync(store, snapshot, limits, ignore))
                span.set(listed=len(listed), read=len(wanted))
        logger.info("index of %s: %s", repo, report.line())
        return report

    async def retrieve(self, repo: str, patches: Mapping[str, FilePatch], head_texts: Mapping[str, str],
                       budget: int) -> Retrieval:
        changes = changed_files(patches, head_texts)
        return await self._with_store(repo, lambda store: retrieve(store, changes, budget))


def _drop(store: IndexStore) -> None:
    store.lock()  # not under another process's build of the repository
    store.drop()


async def _list_tree(gh: GitHubClient, owner: str, repo: str, commit: str) -> list[Entry]:
    """Every blob at `commit` with its id and size: one recursive tree call."""
    data = await gh.get("/repos/{owner}/{repo}/git/trees/{tree_sha}",
                        {"owner": owner, "repo": repo, "tree_sha": commit}, params={"recursive": "1"})
    if data.get("truncated"):
        logger.warning("the tree of %s/%s at %s is truncated: the index holds the files GitHub listed",
                       owner, repo, commit[:7])
    return [Entry(e["path"], e["sha"], int(e.get("size", 0))) for e in data["tree"]
            if e.get("type") == "blob" and e.get("mode") != "120000"]


@dataclass(frozen=True)
class IndexContext:
    """What the index gives a review: the pieces retrieval chose, and the lookups the model may ask for."""

    retrieval: Retrieval
    lookups: RepositoryLookups


async def review_context(indexes: RepositoryIndexes, gh: GitHubClient, full_name: str, pull: Mapping,
                         config: EffectiveConfig, patches: list[dict], head_sha: str,
                         budget: int, limits: Limits = DEFAULT_LIMITS, ignored: Sequence[str] = ()) -> IndexContext:
    """What the index adds to this review (the caller deletes the index of a disabled repository).
    `ignored`: the changed paths the configuration ignores, which lookups never show."""
    base, repository = pull.get("base") or {}, (pull.get("base") or {}).get("repo") or {}
    owner, name = full_name.split("/", 1)
    if base.get("ref") == repository.get("default_branch") and base.get("sha"):
        indexed = await indexes.commit(full_name)
        if indexed is None or await _moves_forward(gh, owner, name, indexed, base["sha"]):
            await indexes.update(gh, full_name, base["sha"], [g.pattern for g in config.ignore], limits)
    paths = [p["filename"] for p in patches if p.get("status") != "removed"][:HEAD_READ_LIMIT]
    head_texts = await read_paths(gh, owner, name, paths, head_sha)
    retrieval = await indexes.retrieve(full_name, read_patches(patches), head_texts, budget)
    head = HeadView.of(patches, head_texts, ignored)

    async def read(work: Callable[[IndexStore], T]) -> T:
        return await indexes.read(full_name, work)
    return IndexContext(retrieval, RepositoryLookups(read, head))


async def _moves_forward(gh: GitHubClient, owner: str, repo: str, indexed: str, base: str) -> bool:
    """Whether `base` is past the indexed commit. The index only moves forward: the base of an old
    pull request (weeks behind the default branch) would otherwise flip it back and forth, each
    time re-reading every file changed since. A rewritten default branch (`diverged`) is followed."""
    if indexed == base:
        return False
    data = await gh.get("/repos/{owner}/{repo}/compare/{basehead}",
                        {"owner": owner, "repo": repo, "basehead": f"{indexed}...{base}"},
                        params={"per_page": "1"})
    return data.get("status") in ("ahead", "diverged")


async def index_push(indexes: RepositoryIndexes, gh: GitHubClient, admin: AdminConfig | None, full_name: str,
                     commit: str, *, until_done: bool = False) -> BuildReport | None:
    """A push to the default branch: the index follows it, with the configuration at that commit
    (`enabled`, `ignore`) layered on the admin file's; a disabled repository's index is deleted.
    Each update reads at most `reads_per_update` files; `until_done` runs updates one after the
    other until none is left to read (an installation's first build), never two at once."""
    owner, name = full_name.split("/", 1)
    at = await tree(gh, owner, name, commit)
    names = present_names(at.paths)
    files = {n: (await read_file(gh, owner, name, n, commit)) or "" for n in names[:1]}
    files.update({n: "" for n in names[1:]})
    repo_config, _, _ = load_config_file(files, admin, full_name, "merge-base")
    config = effective_config(admin, repo_config, full_name)
    if not config.enabled:
        await indexes.delete(full_name)
        return None
    limits = admin.index_limits if admin is not None else IndexLimits()
    ignore = [g.pattern for g in config.ignore]
    report = await indexes.update(gh, full_name, commit, ignore, limits)
    while until_done and report.pending and report.read:
        report = await indexes.update(gh, full_name, commit, ignore, limits)
    return report
