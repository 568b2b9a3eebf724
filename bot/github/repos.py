"""Reading a repository through the REST API: the repository, merge base and changed files, trees, files,
pull requests."""

from __future__ import annotations

import base64
from dataclasses import dataclass

from .client import GitHubClient
from .errors import GitHubError

COMPARE_FILE_LIMIT = 300  # a comparison lists at most 300 files
PULL_FILE_LIMIT = 3000  # the pull request files endpoint lists at most 3000
CONTENT_LIMIT = 1024 * 1024  # the contents API inlines files up to 1 MB


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    previous_path: str | None  # for a rename
    additions: int
    deletions: int
    patch: str | None  # unified diff hunks; None when GitHub leaves it out (binary or too large)

    @classmethod
    def from_github(cls, entry: dict) -> ChangedFile:
        return cls(entry["filename"], entry["status"], entry.get("previous_filename"), entry.get("additions", 0),
                   entry.get("deletions", 0), entry.get("patch"))


@dataclass(frozen=True)
class Comparison:
    merge_base: str
    files: tuple[ChangedFile, ...]
    complete: bool  # False when GitHub listed fewer files than changed (over 3000, or 300 without a PR number)


@dataclass(frozen=True)
class RepoTree:
    paths: frozenset[str]  # every file (blob) path
    truncated: bool  # GitHub cut the listing short (over 100,000 entries or 7 MB): paths are incomplete


class FileTooLarge(Exception):
    def __init__(self, path: str, size: int) -> None:
        super().__init__(f"{path}: {size} bytes, more than the {CONTENT_LIMIT} the contents API returns")
        self.path = path
        self.size = size


async def merge_base_and_files(gh: GitHubClient, owner: str, repo: str, base_sha: str, head_sha: str, *,
                               pull_number: int | None = None) -> Comparison:
    """The merge base of `base...head` and the files the pull request changes, in GitHub's order.

    A comparison lists at most 300 files; when it lists that many and the pull request number is
    known, the files come from the pull request's own listing instead (up to 3000).
    """
    data = await gh.get("/repos/{owner}/{repo}/compare/{basehead}",
                        {"owner": owner, "repo": repo, "basehead": f"{base_sha}...{head_sha}"})
    merge_base = data["merge_base_commit"]["sha"]
    files = [ChangedFile.from_github(f) for f in data.get("files", [])]
    if len(files) < COMPARE_FILE_LIMIT:
        return Comparison(merge_base, tuple(files), True)
    if pull_number is None:
        return Comparison(merge_base, tuple(files), False)
    files = await pull_files(gh, owner, repo, pull_number)
    return Comparison(merge_base, tuple(files), len(files) < PULL_FILE_LIMIT)


@dataclass(frozen=True)
class Increment:
    """What changed from one commit to another (`base...head` of compare)."""

    status: str  # ahead (base is an ancestor of head) | behind | diverged | identical
    files: tuple[dict, ...]  # GitHub's file entries (filename, status, patch, ...)
    commits: int  # commits in head and not in base
    complete: bool  # False when GitHub listed fewer files than changed (300 at most)


async def changes_between(gh: GitHubClient, owner: str, repo: str, base: str, head: str) -> Increment | None:
    """The changes from `base` to `head`, or None when GitHub no longer knows `base` (a commit a
    force-push dropped may be gone)."""
    try:
        data = await gh.get("/repos/{owner}/{repo}/compare/{basehead}",
                            {"owner": owner, "repo": repo, "basehead": f"{base}...{head}"})
    except GitHubError as exc:
        if exc.status in (404, 422):
            return None
        raise
    files = tuple(data.get("files") or ())
    return Increment(str(data.get("status")), files, int(data.get("total_commits") or 0),
                     len(files) < COMPARE_FILE_LIMIT)


async def pull_files(gh: GitHubClient, owner: str, repo: str, pull_number: int) -> list[ChangedFile]:
    """The pull request's changed files, every page (GitHub stops at 3000)."""
    entries = await gh.get_all("/repos/{owner}/{repo}/pulls/{pull_number}/files",
                               {"owner": owner, "repo": repo, "pull_number": pull_number}, limit=PULL_FILE_LIMIT)
    return [ChangedFile.from_github(e) for e in entries]


async def tree(gh: GitHubClient, owner: str, repo: str, sha: str) -> RepoTree:
    """Every file path at a commit (one recursive tree call); `truncated` says when GitHub cut it short."""
    data = await gh.get("/repos/{owner}/{repo}/git/trees/{tree_sha}",
                        {"owner": owner, "repo": repo, "tree_sha": sha}, params={"recursive": "1"})
    return RepoTree(frozenset(e["path"] for e in data["tree"] if e["type"] == "blob"), bool(data["truncated"]))


async def read_file(gh: GitHubClient, owner: str, repo: str, path: str, ref: str) -> str | None:
    """A file's text at `ref`; None when there is no file there (absent, or a directory).

    Invalid UTF-8 is replaced (U+FFFD) rather than refused, so a parser reports the bad spot.
    Raises FileTooLarge above 1 MB, the most the contents API returns.
    """
    try:
        data = await gh.get("/repos/{owner}/{repo}/contents/{+path}",
                            {"owner": owner, "repo": repo, "path": path}, params={"ref": ref})
    except GitHubError as exc:
        if exc.status == 404:
            return None
        raise
    if not isinstance(data, dict) or data.get("type") != "file":
        return None
    if data.get("encoding") != "base64":
        raise FileTooLarge(path, int(data.get("size", 0)))
    return base64.b64decode(data["content"]).decode("utf-8", errors="replace")


async def repository(gh: GitHubClient, owner: str, repo: str) -> dict:
    """The repository object: `full_name` as GitHub spells it, `default_branch`, ..."""
    return await gh.get("/repos/{owner}/{repo}", {"owner": owner, "repo": repo})


async def pull_request(gh: GitHubClient, owner: str, repo: str, number: int) -> dict:
    """The pull request object (for events whose payload does not carry it, e.g. check_run)."""
    return await gh.get("/repos/{owner}/{repo}/pulls/{pull_number}", {"owner": owner, "repo": repo, "pull_number": number})
