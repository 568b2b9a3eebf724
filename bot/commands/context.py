"""`reviewer context --repo DIR [--base REF] [--head REF] [--format text|json]`: what the repository
index would add to the review of `base...head`, offline.

The index of the checkout is kept under its git dir (`.git/reviewer/index.sqlite3`), built at the merge
base the first time and updated from it afterwards (only the blobs that changed are read), so a
second run is quick. Building, retrieval and the changed lines are the server's own functions;
only the reads differ (git here, the GitHub API there). Exit 0 when the context was printed, 2 on
a usage or git error.
"""

from __future__ import annotations

import argparse
import os
import sys

from bot.documents.diagnostics import dumps
from bot.engine.index_context import changed_files
from bot.engine.request import DEFAULT_BUDGETS
from bot.index.build import BuildReport, sync
from bot.index.gitdiff import diff_entries
from bot.index.gitsource import GitSnapshot
from bot.index.retrieve import Retrieval, retrieve
from bot.plan.git import GitError, git
from bot.plan.offline import OfflinePlan, UsageError, plan_from_git
from bot.reviews.diff import read_patches
from bot.store.index import open_sqlite_index
from bot.store.model import StoreError

LOCAL_REPO = "local"


def index_path(repo: str) -> str:
    """`<git dir>/reviewer/index.sqlite3`; a worktree has its own git dir, so its own index."""
    common = git(repo, "rev-parse", "--git-dir").decode().strip()
    if not os.path.isabs(common):
        common = os.path.join(repo, common)
    folder = os.path.join(common, "reviewer")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "index.sqlite3")


def local_context(repo: str, base: str | None, head: str) -> tuple[OfflinePlan, BuildReport | None, Retrieval]:
    """Build or update the checkout's index at the merge base, then retrieve for the change."""
    planned = plan_from_git(repo, base=base, head=head)
    with open_sqlite_index(index_path(repo), LOCAL_REPO) as store:
        if not planned.config.enabled:
            store.drop()
            return planned, None, Retrieval(budget=DEFAULT_BUDGETS.index)
        ignore = [g.pattern for g in planned.config.ignore]
        report = sync(store, GitSnapshot(repo, planned.merge_base), ignore=ignore)
        entries = diff_entries(repo, planned.merge_base, planned.head_sha)
        patches = read_patches(entries)
        head_texts = GitSnapshot(repo, planned.head_sha).read([e["filename"] for e in entries])
        texts = {path: data.decode("utf-8", errors="replace") for path, data in head_texts.items()}
        return planned, report, retrieve(store, changed_files(patches, texts), DEFAULT_BUDGETS.index)


def run(args: argparse.Namespace) -> int:
    try:
        planned, report, found = local_context(args.repo, args.base, args.head)
    except (GitError, UsageError) as error:
        print(f"reviewer context: {error}", file=sys.stderr)
        return 2
    except StoreError as error:
        print(f"reviewer context: the index under {args.repo}/.git/reviewer cannot be used: {error}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(dumps({
            "base": planned.base, "head": planned.head, "mergeBase": planned.merge_base, "headSha": planned.head_sha,
            "enabled": report is not None, "index": report.to_json() if report else None,
            "summary": found.summary(), "context": [p.to_json() for p in found.pieces],
        }))
        return 0
    print(f"Context for {planned.head} ({planned.head_sha[:7]}) onto {planned.base}, merge base "
          f"{planned.merge_base[:7]}")
    print(f"Index: {report.line()}" if report else "Index: indexing is disabled (enabled: false); the index was deleted")
    print(found.summary())
    for piece in found.pieces:
        print(f"{piece.label}  {piece.kind}  {piece.symbol}  — {piece.reason}")
    return 0
