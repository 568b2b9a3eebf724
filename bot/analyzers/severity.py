"""The admin file's `analyzers.severity` (pure): `{"<tool>/<rule glob>": <severity>}` maps an
analyzer's rules up or down, over what SARIF and bot/analyzers/model.py make of them.

The tool is matched by name in any case (`ruff`, `ESLint`), the rule by a glob in fnmatch's syntax
over its id (`F4*`, `py/sql-*`: the first `/` of the key ends the tool's name, so a rule id may
hold more). The first key in the file's order that matches a result wins; a result without a
rule id is matched by a key whose glob is `*`. The keys and values are checked where the file is
read (bot/config/admin_schema.py: `pattern` for a key, `enum` for a severity, at their line).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

from bot.analyzers.model import AnalyzerResult


@dataclass(frozen=True, slots=True)
class SeverityRule:
    tool: str  # lower case
    rule: str  # a glob over the rule id
    severity: str

    def matches(self, result: AnalyzerResult) -> bool:
        return result.tool.lower() == self.tool and fnmatchcase(result.rule_id or "", self.rule)


def severity_rules(mapping: Mapping[str, str] | None) -> tuple[SeverityRule, ...]:
    """The validated mapping as rules, in the file's order."""
    out = []
    for key, severity in (mapping or {}).items():
        tool, _, rule = key.partition("/")
        out.append(SeverityRule(tool.lower(), rule, severity))
    return tuple(out)


def mapped(results: Iterable[AnalyzerResult], rules: tuple[SeverityRule, ...]) -> list[AnalyzerResult]:
    """Each result with the severity the first matching rule gives it (the others as they were)."""
    if not rules:
        return list(results)
    out = []
    for result in results:
        rule = next((r for r in rules if r.matches(result)), None)
        out.append(replace(result, mapped_severity=rule.severity) if rule is not None else result)
    return out
