"""The plumbing of reading SARIF (pure): GitHub's limits, and the collector of problems that stops
reading once it holds enough of them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, TypeGuard

from bot.analyzers.model import AnalyzerResult, Problem


@dataclass(frozen=True)
class Limits:
    runs: int = 20
    results_per_run: int = 25_000
    rules_per_run: int = 25_000
    extensions_per_run: int = 100
    locations_per_result: int = 1_000
    tags_per_rule: int = 20
    thread_flow_locations_per_result: int = 10_000
    text_chars: int = 100_000  # a message, a description, a fix's text
    name_chars: int = 1_024  # a rule id, a tag, a tool's name, a fingerprint
    problems: int = 20  # reading stops after this many


GITHUB_LIMITS = Limits()


class Refused(Exception):
    """Enough problems: stop reading."""


class Reader:
    """Collects the results read and the problems found, with their JSON pointers."""

    def __init__(self, limits: Limits, base: str) -> None:
        self.limits = limits
        self.base = base
        self.problems: list[Problem] = []
        self.results: list[AnalyzerResult] = []
        self.skipped: Counter[str] = Counter()

    def problem(self, pointer: str, code: str, message: str) -> None:
        """A message starts with the pointer it is about, which gets the base too."""
        if self.base and message.startswith(pointer):
            message = self.base + message
        self.problems.append(Problem(self.base + pointer, code, message))
        if len(self.problems) >= self.limits.problems:
            raise Refused

    def text(self, value: Any, pointer: str, limit: int, *, required: bool = False) -> str | None:
        if value is None and not required:
            return None
        if not isinstance(value, str):
            self.problem(pointer, "required" if value is None else "type",
                         f"{pointer or 'the value'}: a string is required")
            return None
        if len(value) > limit:
            self.problem(pointer, "too-large", f"{pointer}: {len(value)} characters; the limit is {limit}")
            return None
        return value

    def array(self, value: Any, pointer: str, limit: int, what: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(pointer, "type", f"{pointer}: a list is required")
            return []
        if len(value) > limit:
            self.problem(pointer, "too-many", f"{pointer}: {len(value):,} {what}; GitHub's limit, which we keep, "
                                              f"is {limit:,}")
            return []
        return value



def number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def as_list(value: Any) -> list:
    return value if isinstance(value, list) else []


def as_mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def strings(value: Any) -> list[str]:
    return [v[:200] for v in value if isinstance(v, str)] if isinstance(value, list) else []


def is_line(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
