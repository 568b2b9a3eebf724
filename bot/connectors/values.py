"""Value syntaxes the connector fields share: Go durations and `force_authn`'s spellings.

They are pinned in docs/connectors.md. The structural schema states them as patterns (so the published
JSON Schema and CRD carry them); the parsers here give the meaning the reconcile phase checks
(whole seconds, never negative) and that a consumer would use.
"""

from __future__ import annotations

import re
from fractions import Fraction

NANOS_PER_SECOND = 1_000_000_000

# Go's time.ParseDuration units, in nanoseconds (both spellings of micro).
_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000,
          "s": NANOS_PER_SECOND, "m": 60 * NANOS_PER_SECOND, "h": 3600 * NANOS_PER_SECOND}
_UNIT_ALTERNATION = "ns|us|µs|μs|ms|s|m|h"
_NUMBER = r"([0-9]+(\.[0-9]*)?|\.[0-9]+)"
_SEGMENT = re.compile(rf"(?P<number>{_NUMBER})(?P<unit>{_UNIT_ALTERNATION})")

# Written without inline flags or lookarounds so that it means the same in ECMA-262 (JSON Schema,
# Kubernetes) as in Python.
DURATION_PATTERN = rf"^(never|[-+]?(0|({_NUMBER}({_UNIT_ALTERNATION}))+))$"
DURATION_HINT = "a Go duration such as `24h`, `1h30m` or `90s`; `never` or `0` for none"

FORCE_AUTHN_YES = ("yes", "yeah", "y", "true", "1", "on")
FORCE_AUTHN_NO = ("no", "nope", "n", "false", "0", "off")


def parse_duration(value: str | int) -> Fraction | None:
    """Nanoseconds of a Go duration string or an integer of nanoseconds; None when malformed."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if value == "never":
        return Fraction(0)
    sign, text = 1, value
    if text and text[0] in "+-":
        sign, text = (-1 if text[0] == "-" else 1), text[1:]
    if text == "0":
        return Fraction(0)
    total, pos = Fraction(0), 0
    while pos < len(text):
        match = _SEGMENT.match(text, pos)
        if match is None:
            return None
        total += Fraction(match["number"]) * _UNITS[match["unit"]]
        pos = match.end()
    return sign * total if text else None


def _any_case(word: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word)


# The string spellings of force_authn, any case, as one ECMA-compatible pattern.
FORCE_AUTHN_PATTERN = "^(" + "|".join(_any_case(w) for w in FORCE_AUTHN_YES + FORCE_AUTHN_NO) + ")?$"
FORCE_AUTHN_HINT = "`yes`/`no` (also true/false, on/off, y/n, 1/0, any case) or empty for unspecified"
