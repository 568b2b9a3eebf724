"""The effective configuration as JSON, in the repository file's own names (the admin API's answer).

An administrator reading it should recognise what they wrote: `requireSuggestedFix`, not
`require_suggested_fix`; `filterExpr` as the list of expressions that are ANDed; every list entry
with the layer that wrote it and where (`origin`). A provider's `apiKey` is never shown, not even
the reference: only its kind (`secret`, `env`), so that the answer can be pasted into a ticket.
Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from bot.config.model import ContextEntry, EffectiveConfig, Expr, Glob, Origin, Provider, Rule
from bot.secrets.references import REDACTED

_API_KEY_KINDS = {"secret://": "secret", "env://": "env"}


def render_effective(config: EffectiveConfig) -> dict[str, Any]:
    """Every field of `config`, JSON-ready."""
    return {
        "enabled": config.enabled,
        "disabledBy": config.disabled_by,
        "models": config.models.to_json(),
        "feedback": config.feedback,
        "comments": config.comments.to_json(),
        "requireSuggestedFix": config.require_suggested_fix,
        "approve": config.approve,
        "filterExpr": [_expr(expr) for expr in config.filter_exprs],
        "ignore": [_glob(glob) for glob in config.ignore],
        "rules": [_rule(rule) for rule in config.rules],
        "context": [_context(entry) for entry in config.context],
        "agentFiles": config.agent_files,
        "providers": {name: _provider(provider) for name, provider in sorted(config.providers.items())},
    }


def api_key_kind(value: str | None) -> str | None:
    """What kind of reference an `apiKey` is — never the reference or the key itself."""
    if value is None:
        return None
    return next((kind for prefix, kind in _API_KEY_KINDS.items() if value.startswith(prefix)), REDACTED)


def _origin(origin: Origin) -> dict[str, Any]:
    return {"file": origin.file, "line": origin.line, "column": origin.column}


def _expr(expr: Expr) -> dict[str, Any]:
    return {"expr": expr.text, "source": expr.source, "origin": _origin(expr.origin)}


def _glob(glob: Glob) -> dict[str, Any]:
    return {"pattern": glob.pattern, "source": glob.source, "origin": _origin(glob.origin)}


def _rule(rule: Rule) -> dict[str, Any]:
    return {"id": rule.id, "source": rule.source, "rule": rule.rule, "file": rule.file, "paths": list(rule.paths),
            "whenExpr": rule.when_expr.text if rule.when_expr else None, "origin": _origin(rule.origin)}


def _context(entry: ContextEntry) -> dict[str, Any]:
    return {"path": entry.path, "description": entry.description, "paths": list(entry.paths),
            "source": entry.source, "origin": _origin(entry.origin)}


def _provider(provider: Provider) -> dict[str, Any]:
    return {"type": provider.type, "baseUrl": provider.base_url, "timeout": provider.timeout,
            "apiKey": api_key_kind(provider.api_key), "source": provider.source}
