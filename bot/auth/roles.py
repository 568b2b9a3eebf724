"""Roles from claims, with Teleport's matching (`claims_to_roles`), so a connector written for
Teleport maps the same way here.

A mapping's `value` written `^…$` is a regular expression; anything else is a glob where `*`
matches any text. The whole claim value must match, whatever the expression's alternations say
(`bot.auth.patterns`). Roles may use `$1`, `${1}` or `${name}` expansions of the match. A claim
may be a string or a list of strings; other types never match. Regular expressions run on RE2
(linear time), so a hostile claim value cannot stall a sign-in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.auth.patterns import compile_pattern

MAX_VALUE = 4096  # characters of one claim value considered
MAX_VALUES = 1000  # values of one list claim considered

_EXPANSION = re.compile(r"\$(\d+|\{(\w+)\})")


@dataclass(frozen=True)
class RoleMapping:
    claim: str
    value: str
    roles: tuple[str, ...]


@dataclass
class RoleResult:
    roles: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def mappings_from(spec_list: Any, key: str = "claim") -> list[RoleMapping]:
    """The connector's `claims_to_roles` entries (already structurally valid) as mappings."""
    found = []
    for entry in spec_list if isinstance(spec_list, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get(key), str) and isinstance(entry.get("value"), str):
            roles = tuple(r for r in entry.get("roles") or () if isinstance(r, str))
            found.append(RoleMapping(entry[key], entry["value"], roles))
    return found


def compile_value(pattern: str) -> Any:
    """The whole-value matcher of one mapping value: `^…$` as a regular expression, else a glob."""
    return compile_pattern(pattern)


def claim_values(value: Any) -> list[str]:
    """A claim as the strings it holds (a string, or a list of strings); other shapes hold none."""
    if isinstance(value, str):
        return [value[:MAX_VALUE]] if len(value) <= MAX_VALUE else []
    if isinstance(value, list):
        return [v for v in value[:MAX_VALUES] if isinstance(v, str) and len(v) <= MAX_VALUE]
    return []


def expand(template: str, match: Any) -> str:
    """`$1`, `${1}`, `${name}` replaced by the match's groups; an unknown group becomes empty."""
    def group(m: re.Match[str]) -> str:
        key = m.group(2) or m.group(1)
        try:
            value = match.group(int(key) if key.isdigit() else key)
        except LookupError:  # IndexError or KeyError: no such group
            return ""
        return value or ""
    return _EXPANSION.sub(group, template)


def map_roles(mappings: Iterable[RoleMapping], claims: Mapping[str, Any]) -> RoleResult:
    """The roles the claims earn, deduplicated in order, and why an entry that nearly matched did not."""
    result = RoleResult()
    for mapping in mappings:
        try:
            matcher = compile_value(mapping.value)
        except ValueError as exc:
            result.warnings.append(f"claims_to_roles entry for claim `{mapping.claim}` skipped: {exc}")
            continue
        for value in claim_values(claims.get(mapping.claim)):
            match = matcher.match(value)
            if match is None:
                if _case_only(mapping.value, value):
                    result.warnings.append(f"claim `{mapping.claim}` matches `{mapping.value}` only when case is "
                                           "ignored; matching is case-sensitive, so no role was granted")
                continue
            for template in mapping.roles:
                role = expand(template, match)
                if role and role not in result.roles:
                    result.roles.append(role)
    return result


def _case_only(pattern: str, value: str) -> bool:
    try:
        return compile_value(pattern.lower()).match(value.lower()) is not None
    except ValueError:
        return False
