"""The shapes every analyzer module shares: a problem with an input, a result read from SARIF, and
how a result's SARIF level, security severity and rule tags become our severity and category.

Severity (GitHub's own reading of SARIF, as the issue pins it): `level` error → important, warning
→ minor, note and none → nit; a rule's `security-severity` of 9.0 or more → blocking, of 7.0 or
more → important; the higher of the two wins. A linter's (LINTERS, by tool name, any case) level
counts for `minor` at most: ruff marks every rule `error`, and an unsorted import is no reason to
withhold an approval; its `security-severity` still raises it. The admin file maps rules up or down
over all of this (bot/analyzers/severity.py). Category: a `security` tag (or a secret) is
`security`; other well-known tags map to our categories; anything else is `other`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

LEVELS = ("error", "warning", "note", "none")
SEVERITY_ORDER = ("nit", "minor", "important", "blocking")  # lowest first
_BY_LEVEL = {"error": "important", "warning": "minor", "note": "nit", "none": "nit"}
# Linters: their findings are about style and likely mistakes, whatever level they write.
LINTERS = frozenset({"ruff", "flake8", "pylint", "eslint", "shellcheck", "hadolint", "actionlint", "golangci-lint",
                     "rubocop", "stylelint", "markdownlint"})

# Rule tags as tools write them (CodeQL, semgrep, ruff's and ShellCheck's own words) → our category.
_TAG_CATEGORIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("security", frozenset({"security"})),
    ("bug", frozenset({"correctness", "bug", "reliability", "error-prone", "errorprone", "suspicious"})),
    ("performance", frozenset({"performance", "efficiency"})),
    ("maintainability", frozenset({"maintainability", "complexity", "useless-code", "deprecated"})),
    ("style", frozenset({"style", "readability", "convention", "formatting", "naming", "pedantic"})),
    ("docs", frozenset({"docs", "documentation"})),
)


@dataclass(frozen=True, slots=True)
class Problem:
    """Why an input is refused: a JSON pointer into it, a stable kebab-case code, and a message
    that names the field, the rule and the limit. A message quotes no value that may hold a
    secret (a message, a version, a fingerprint); a refused path or URI is shown, cut short."""

    pointer: str
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"pointer": self.pointer, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class Edit:
    """One SARIF replacement: delete the region (1-based lines and columns, the end column
    exclusive; a column of None is the start or the end of its line) and insert `text`."""

    start_line: int
    start_column: int | None
    end_line: int
    end_column: int | None
    text: str


@dataclass(frozen=True, slots=True)
class AnalyzerResult:
    """One SARIF result, read with its rule's defaults. `path` is relative to the repository root
    (None: the result names no file); lines are None for a result on a whole file."""

    tool: str
    rule_id: str | None
    level: str  # error | warning | note | none
    security_severity: float | None
    message: str
    path: str | None
    start_line: int | None
    end_line: int | None
    edits: tuple[Edit, ...] = ()  # the first fix that changes this result's file only
    partial_fingerprints: Mapping[str, str] = field(default_factory=dict)
    help_uri: str | None = None
    rule_name: str | None = None  # the rule's shortDescription (else its name)
    tags: tuple[str, ...] = ()
    mapped_severity: str | None = None  # the admin file's `analyzers.severity` for its tool and rule

    @property
    def severity(self) -> str:
        if self.mapped_severity is not None:
            return self.mapped_severity
        return severity_of(self.level, self.security_severity, linter=self.tool.lower() in LINTERS)

    @property
    def category(self) -> str:
        return category_of(self.tags)


def severity_of(level: str, security_severity: float | None, *, linter: bool = False) -> str:
    """Our severity for a SARIF level and a rule's security severity: the higher of the two; a
    linter's level counts for `minor` at most."""
    by_level = _BY_LEVEL.get(level, "minor")
    if linter:
        by_level = min(by_level, "minor", key=SEVERITY_ORDER.index)
    by_security = None
    if security_severity is not None:
        by_security = "blocking" if security_severity >= 9.0 else "important" if security_severity >= 7.0 else None
    if by_security is None:
        return by_level
    return max(by_level, by_security, key=SEVERITY_ORDER.index)


def category_of(tags: Iterable[str]) -> str:
    """Our category for a rule's tags; `security` first, since it decides what a reader must see."""
    words = {tag.strip().lower() for tag in tags}
    for category, names in _TAG_CATEGORIES:
        if words & names:
            return category
    return "other"
