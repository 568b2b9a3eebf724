"""Instance → account → repository: the effective configuration, with where each value came from.

The semantics are docs/configuration.md's, field by field: `enabled` AND (a disabled repository stays off),
`requireSuggestedFix` OR (a later layer can only turn it on), `filterExpr` AND, `ignore`, `rules`
and `context` appended (admin first), and every other field replaced, each on its own, by the
latest layer that sets it. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType
from typing import Any

from bot.config.admin import Account, AdminConfig
from bot.config.layer import LayerSettings
from bot.config.model import Comments, EffectiveConfig, Glob, Models, Origin
from bot.config.repo import RepoConfig
from bot.expr.globs import glob_match

DEFAULTS: dict[str, Any] = {
    "enabled": True, "models.review": None, "models.fallback": None, "feedback": "standard",
    "comments.inline": True, "comments.summaryTemplate": None, "comments.inlineTemplate": None,
    "requireSuggestedFix": False, "approve": False, "agentFiles": True,
}
# A value that decides the field on its own, whatever later layers say: requireSuggestedFix OR.
# (`enabled` AND is `_disabled_by`, one rule with `disabledRepositories`, and it says why.)
STICKY = {"requireSuggestedFix": True}
LIST_FIELDS = {"filterExpr": "filter_expr", "ignore": "ignore", "rules": "rules", "context": "context"}


def effective_config(admin: AdminConfig | None, repo: RepoConfig | None,
                     full_name: str | None = None) -> EffectiveConfig:
    admin = admin or AdminConfig.empty()
    account = admin.account(full_name)
    layers = [admin.defaults] + ([account.settings] if account else []) + ([repo.settings] if repo else [])

    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    origins: dict[str, Origin] = {}
    for name in DEFAULTS:
        values[name], sources[name], origin = _merge(name, layers)
        if origin is not None:
            origins[name] = origin
    off = _disabled_by(layers, account, full_name)
    disabled_by = off[0] if off else None
    if off is not None:
        values["enabled"], sources["enabled"] = False, off[1]

    for name, attribute in LIST_FIELDS.items():
        sources[name] = _joined(layer.source for layer in layers if getattr(layer, attribute))
    providers = admin.declared_providers(full_name)
    sources["providers"] = _joined(provider.source for provider in providers.values())

    return EffectiveConfig(
        enabled=values["enabled"],
        disabled_by=disabled_by,
        models=Models(values["models.review"], values["models.fallback"]),
        feedback=values["feedback"],
        comments=Comments(values["comments.inline"], values["comments.summaryTemplate"],
                          values["comments.inlineTemplate"], origins.get("comments.summaryTemplate"),
                          origins.get("comments.inlineTemplate")),
        require_suggested_fix=values["requireSuggestedFix"],
        approve=values["approve"],
        filter_exprs=tuple(layer.filter_expr for layer in layers if layer.filter_expr is not None),
        ignore=tuple(glob for layer in layers for glob in layer.ignore),
        rules=tuple(rule for layer in layers for rule in layer.rules),
        context=tuple(entry for layer in layers for entry in layer.context),
        agent_files=values["agentFiles"],
        providers=MappingProxyType(providers),
        sources=MappingProxyType(sources),
    )


def _merge(name: str, layers: list[LayerSettings]) -> tuple[Any, str, Origin | None]:
    """(value, layer it came from, where it was written) of one single-valued field."""
    written = [layer for layer in layers if name in layer.scalars]
    if not written:
        return DEFAULTS[name], "default", None
    if name in STICKY:
        for layer in written:
            if layer.scalars[name] == STICKY[name]:
                return STICKY[name], layer.source, layer.origins[name]
    last = written[-1]
    return last.scalars[name], last.source, last.origins[name]


def _disabled_by(layers: list[LayerSettings], account: Account | None,
                 full_name: str | None) -> tuple[str, str] | None:
    """(a sentence naming what turned the repository off, its layer): the first in layering order.

    An account's `disabledRepositories` counts as part of the account layer.
    """
    for layer in layers:
        if layer.scalars.get("enabled") is False:
            who = _LAYER_NAMES[layer.source].format(login=account.login if account else "")
            return f"{who} sets `enabled: false` ({_where(layer.origins['enabled'])})", layer.source
        if layer.source == "account" and account is not None:
            glob = _disabling_glob(account, full_name)
            if glob is not None:
                return (f"the account `{account.login}` disables this repository: `disabledRepositories` "
                        f"matches `{glob.pattern}` ({_where(glob.origin)})", "account")
    return None


_LAYER_NAMES = {"instance": "the instance configuration", "account": "the account `{login}`",
                "repository": "the repository's configuration"}


def _disabling_glob(account: Account, full_name: str | None) -> Glob | None:
    """The first `disabledRepositories` glob matching the repository's name (case-insensitive)."""
    if not full_name or "/" not in full_name:
        return None
    name = full_name.split("/", 1)[1].lower()
    return next((glob for glob in account.disabled_repositories if glob_match(glob.pattern.lower(), name)), None)


def _where(origin: Origin) -> str:
    return f"{origin.file}:{origin.line}" if origin.file else f"line {origin.line}"


def _joined(sources: Iterable[str]) -> str:
    """Distinct layers in order, `+`-joined; "default" when none contributed."""
    return "+".join(dict.fromkeys(sources)) or "default"

