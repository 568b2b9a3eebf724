"""Installation events and the repository index (I/O): repositories added to the app get their
default branch indexed at once, instead of at their first review; removed ones (or the whole
installation, uninstalled) lose their index, so that no copy of their source is kept.

One job per installation event, keyed by installation, so one repository is built at a time per
installation; each build goes through the paced update (`RepositoryIndexes.update`, at most
`reads_per_update` contents reads at a time, four in flight), so a large installation does not
flood GitHub.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.config.admin import AdminConfig
from bot.github import GitHubClient, GitHubError
from bot.pipeline.index import RepositoryIndexes, index_push

logger = logging.getLogger("reviewer.index")


@dataclass(frozen=True)
class RepositoryChanges:
    """The repositories an installation event adds to the app, and those it takes away."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


def _names(payload: dict[str, Any], key: str) -> tuple[str, ...]:
    listed = payload.get(key)
    if not isinstance(listed, list):
        return ()
    return tuple(r["full_name"] for r in listed
                 if isinstance(r, dict) and isinstance(r.get("full_name"), str) and "/" in r["full_name"])


def repository_changes(event: str, action: str | None, payload: dict[str, Any]) -> RepositoryChanges:
    """What `event.action` does to the set of repositories the app reaches (pure)."""
    if event == "installation" and action == "created":
        return RepositoryChanges(added=_names(payload, "repositories"))
    if event == "installation" and action == "deleted":
        return RepositoryChanges(removed=_names(payload, "repositories"))
    if event == "installation_repositories":
        return RepositoryChanges(_names(payload, "repositories_added"), _names(payload, "repositories_removed"))
    return RepositoryChanges()


async def default_head(gh: GitHubClient, owner: str, repo: str) -> str:
    """The commit at the head of the repository's default branch, read now (the payload names
    no commit): the repository names its branch, and comparing the branch with itself its head."""
    data = await gh.get("/repos/{owner}/{repo}", {"owner": owner, "repo": repo})
    branch = data["default_branch"]
    compared = await gh.get("/repos/{owner}/{repo}/compare/{basehead}",
                            {"owner": owner, "repo": repo, "basehead": f"{branch}...{branch}"},
                            params={"per_page": "1"})
    return compared["base_commit"]["sha"]


async def index_installation(indexes: RepositoryIndexes, gh: Callable[[], GitHubClient],
                             admin: AdminConfig | None, changes: RepositoryChanges) -> None:
    """Delete the indexes of removed repositories, then build those of added ones, one after the
    other. `gh` makes the installation's client only when a repository is added: an uninstalled
    app has no token to ask for. A repository that cannot be read now (empty, gone) is logged and
    left to its first review or push; the others are still built."""
    for full_name in changes.removed:
        await indexes.delete(full_name)
        logger.info("index of %s deleted: the app no longer reaches it", full_name)
    if not changes.added:
        return
    client = gh()
    for full_name in changes.added:
        owner, name = full_name.split("/", 1)
        try:
            commit = await default_head(client, owner, name)
            await index_push(indexes, client, admin, full_name, commit, until_done=True)
        except GitHubError as exc:
            logger.warning("the index of %s was not built on installation: %s", full_name, exc.describe())
