"""The admin file's `analyzers` settings, typed and layered (pure): instance, then the account.

Only the administrator decides which analyzers run and how their results are filtered (the
repository file keeps the format it has): the instance's top-level `analyzers`, then
`accounts.<login>.analyzers`, each key of a later layer replacing the earlier one's. The shapes
and their messages are in bot/config/admin_schema.py (`ANALYZERS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from bot.analyzers.severity import SeverityRule, severity_rules
from bot.config.admin import AdminConfig

BUILTINS = ("secrets", "ruff", "shellcheck", "actionlint")


@dataclass(frozen=True, slots=True)
class AnalyzerSettings:
    secrets: bool = True
    ruff: bool = False
    shellcheck: bool = False
    actionlint: bool = False
    filter: str = "added"
    max_inline_per_tool: int = 25
    timeout: float = 60.0
    memory_mib: int = 1024
    severity: tuple[SeverityRule, ...] = field(default_factory=tuple)  # `analyzers.severity`, in the file's order

    @property
    def builtins(self) -> tuple[str, ...]:
        """The built-in analyzers that run, in a fixed order."""
        return tuple(name for name in BUILTINS if getattr(self, name))


_KEYS = {"secrets": "secrets", "ruff": "ruff", "shellcheck": "shellcheck", "actionlint": "actionlint",
         "filter": "filter", "maxInlinePerTool": "max_inline_per_tool", "timeout": "timeout",
         "memoryMiB": "memory_mib", "severity": "severity"}
assert set(_KEYS.values()) == {f.name for f in fields(AnalyzerSettings)}


def layered(*layers: Mapping[str, Any] | None) -> AnalyzerSettings:
    """The settings of validated `analyzers` mappings, later layers replacing earlier ones by key."""
    values: dict[str, Any] = {}
    for layer in layers:
        for key, value in (layer or {}).items():
            if key == "severity":
                values["severity"] = severity_rules(value)
            elif key in _KEYS:
                values[_KEYS[key]] = float(value) if key == "timeout" else value
    return AnalyzerSettings(**values)


def analyzer_settings(admin: AdminConfig, full_name_or_owner: str | None) -> AnalyzerSettings:
    """The settings for a repository of `owner/name` (or an owner): instance, then its account."""
    account = admin.account(full_name_or_owner)
    account_data = None
    if account is not None:
        raw = (admin.data.get("accounts") or {}).get(account.login)
        account_data = raw.get("analyzers") if isinstance(raw, Mapping) else None
    return layered(admin.data.get("analyzers"), account_data)
