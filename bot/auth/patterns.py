"""The one matcher of connector patterns: `claims_to_roles` / `attributes_to_roles` values,
`allowed_https_hostnames` and `user_matchers` (Teleport's convention, docs/connectors.md).

A pattern written `^…$` is a regular expression; anything else is a glob where `*` matches any
text and every other character is itself. Either way the WHOLE value must match: the expression
is compiled as `\\A(?:…)\\z`, so an alternation such as `^admins|ops$` cannot match a prefix
(`admins-of-nothing`) or a suffix (`xops`), and `$` cannot match before a trailing newline. Go's
`regexp` (and so Teleport) would read `^admins|ops$` as "starts with admins, or ends with ops";
we do not. Patterns run on RE2 (linear time) through the one compile that connector validation
uses (`bot.connectors.safe_parse`), so a pattern that passed validation compiles the same here.
"""

from __future__ import annotations

import re
from typing import Any

from bot.connectors.safe_parse import compile_regex

MAX_PATTERN = 1024  # characters of one pattern


def is_regex(pattern: str) -> bool:
    """Whether the pattern is a regular expression (written `^…$`) rather than a glob."""
    return len(pattern) >= 2 and pattern.startswith("^") and pattern.endswith("$")


def whole_value_source(pattern: str, *, ignore_case: bool = False) -> str:
    """The RE2 source that matches exactly the values the pattern allows, from start to end.
    A glob's `*` becomes a capturing `(.*)`, so a role may use it as `$1`."""
    if is_regex(pattern):
        body = pattern
    else:
        body = "(.*)".join(re.escape(part) for part in pattern.split("*"))
    return ("(?i)" if ignore_case else "") + r"\A(?:" + body + r")\z"


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> Any:
    """The compiled whole-value matcher, or ValueError saying why the pattern is refused."""
    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"the pattern is longer than {MAX_PATTERN} characters")
    compiled = compile_regex(whole_value_source(pattern, ignore_case=ignore_case))
    if isinstance(compiled, str):
        raise ValueError(f"`{pattern[:200]}` is not a valid regular expression ({compiled[:200]})")
    return compiled


def full_match(pattern: str, value: str, *, ignore_case: bool = False) -> Any:
    """The match of the whole `value`, or None (also for a pattern that does not compile: a broken
    pattern allows nothing)."""
    try:
        return compile_pattern(pattern, ignore_case=ignore_case).match(value)
    except ValueError:
        return None


def matches_any(patterns: Any, value: str, *, ignore_case: bool = False) -> bool:
    """Whether any of the patterns matches the whole value (a non-string pattern matches nothing)."""
    return any(isinstance(p, str) and full_match(p, value, ignore_case=ignore_case) is not None
               for p in patterns or ())
