"""The admin API's GitHub side: which installation reaches a repository, and its configuration
file at the head of the default branch (I/O; the validation and layering after it are pure).

Calls: the installation comes from the store (recorded from `installation` and
`installation_repositories` events) and only otherwise from GitHub (`GET
/repos/{owner}/{repo}/installation`, with the app's JWT); then the repository (its default branch
and its name as GitHub spells it) and both config file names, read at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from bot.config.model import REPO_CONFIG_NAMES
from bot.github import FileTooLarge, GitHubApp, GitHubError, read_file, repository
from bot.store.model import DeliveryStore


class NotInstalled(Exception):
    """No installation of the app reaches the repository (or GitHub hides that it exists)."""


class _Stale(Exception):
    """The installation the store named does not reach the repository any more."""


@dataclass(frozen=True)
class ConfigAtHead:
    full_name: str  # as GitHub spells it
    ref: str  # the default branch the files were read from
    installation_id: int
    files: dict[str, str] = field(default_factory=dict)  # config file names present → text
    oversized: dict[str, int] = field(default_factory=dict)  # present but over the contents API's 1 MB → size


async def read_config_at_head(app: GitHubApp, store: DeliveryStore, owner: str, repo: str) -> ConfigAtHead:
    """Raises NotInstalled, or GitHubError when GitHub fails (after the client's retries)."""
    stored = await store.installation_for(f"{owner}/{repo}")
    if stored is not None:
        try:
            return await _read(app, stored, owner, repo)
        except _Stale:
            pass  # a missed event (removal, uninstall): GitHub knows better
    asked = await app.repo_installation(owner, repo)
    if asked is None or asked == stored:
        raise NotInstalled(f"{owner}/{repo}")
    try:
        return await _read(app, asked, owner, repo)
    except _Stale:
        raise NotInstalled(f"{owner}/{repo}") from None


async def _read(app: GitHubApp, installation_id: int, owner: str, repo: str) -> ConfigAtHead:
    gh = app.installation(installation_id)
    try:
        found = await repository(gh, owner, repo)  # fetches the installation's token first
    except GitHubError as exc:
        if exc.status == 404:
            raise _Stale() from None
        raise
    full_name, branch = found["full_name"], found["default_branch"]
    owner, repo = full_name.split("/", 1)

    async def one(name: str) -> tuple[str, str | int | None]:
        try:
            return name, await read_file(gh, owner, repo, name, branch)
        except FileTooLarge as exc:
            return name, exc.size

    read = await asyncio.gather(*(one(name) for name in REPO_CONFIG_NAMES))
    return ConfigAtHead(full_name, branch, installation_id,
                        files={name: value for name, value in read if isinstance(value, str)},
                        oversized={name: value for name, value in read if isinstance(value, int)})
