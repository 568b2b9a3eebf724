"""What an installation event does to its installation's record: pure, shared by both backends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class InstallationChange:
    installation_id: int | None
    account: str | None
    last_action: str
    deleted: bool


def change_of(event: str, payload: dict[str, Any]) -> InstallationChange:
    installation = payload.get("installation") or {}
    action = payload.get("action")
    account = (installation.get("account") or {}).get("login")
    return InstallationChange(installation.get("id"), account, f"{event}.{action}",
                              event == "installation" and action == "deleted")


def repositories_after(event: str, payload: dict[str, Any], before: set[str]) -> list[str]:
    """The repositories the installation reaches once the event is applied, sorted."""
    repos = set(before)
    if event == "installation" and payload.get("action") in ("created", "new_permissions_accepted", "unsuspend"):
        repos |= _names(payload.get("repositories"))
    repos = (repos | _names(payload.get("repositories_added"))) - _names(payload.get("repositories_removed"))
    return sorted(repos)


def _names(repositories: Any) -> set[str]:
    if not isinstance(repositories, list):
        return set()
    return {r["full_name"] for r in repositories if isinstance(r, dict) and isinstance(r.get("full_name"), str)}
