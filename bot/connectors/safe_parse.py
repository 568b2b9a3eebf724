"""The one regular-expression compile and the one XML parse that connector values go through.

Both take text from users and must never raise: a pattern nested thousands deep makes Python's
`re` overflow its stack (RecursionError), a huge repeat count overflows an integer, and an XML
declaration naming an unknown or multi-byte encoding makes expat raise LookupError or
ValueError. Each function returns the parsed value or a message saying what is wrong.

Patterns are compiled with RE2, whose syntax is Go's `regexp` — the engine Teleport matches
connector patterns with — plus Go's own limits, so that what passes here Teleport takes too
(RE2 and Go differ only in rarities, such as the any-byte escape): no backreferences or lookarounds, repeat counts
up to 1000, groups nested up to 1000 deep.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from xml.etree.ElementTree import Element, ParseError

import re2
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

MAX_NESTING = 1000  # Go's regexp/syntax maxHeight: deeper is "expression nests too deeply"
MAX_REPEAT = 1000  # Go's and RE2's largest `{n,m}`
_REPEAT = re.compile(r"\{([0-9]+)(?:,([0-9]*))?\}")

_QUIET = re2.Options()
_QUIET.log_errors = False  # RE2 would print its own copy of every error on stderr
_DECLARATION = re.compile(r"""\A\ufeff?<\?xml\s[^>]*?\bencoding\s*=\s*(["'])(.*?)\1""")


@lru_cache(maxsize=512)
def compile_regex(pattern: str) -> Any | str:
    """The compiled pattern, or why Go's `regexp` would refuse it (never an exception). Cached, as
    Python's `re` caches: the same connector's patterns are checked on every PUT and reconcile."""
    beyond = _beyond_go_limits(pattern)
    if beyond:
        return beyond
    try:
        return re2.compile(pattern, _QUIET)
    except re2.error as error:
        reason = error.args[0] if error.args else "invalid"
        return reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
    except (RecursionError, OverflowError, MemoryError, ValueError, TypeError):
        return "is too large or too deeply nested to compile"


def _beyond_go_limits(pattern: str) -> str | None:
    """Go's limits that RE2 does not share: group nesting, and repeat counts too big to parse
    (RE2 reads `a{99999999999}` as literal text; Go calls it an invalid repeat size).
    Escapes and character classes are skipped: a `(` or `{` there is literal."""
    if pattern.count("(") <= MAX_NESTING and not any(_too_big(m) for m in _REPEAT.finditer(pattern)):
        return None  # the common case, decided without a character-by-character scan
    depth, index = 0, 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _class_end(pattern, index)
            continue
        if char == "(":
            depth += 1
            if depth > MAX_NESTING:
                return f"nests groups more than {MAX_NESTING} deep"
        elif char == ")" and depth:
            depth -= 1
        elif char == "{":
            repeat = _REPEAT.match(pattern, index)
            if repeat and _too_big(repeat):
                return f"invalid repeat count {repeat.group(0)[:30]}: at most {MAX_REPEAT}"
        index += 1
    return None


def _too_big(repeat: re.Match[str]) -> bool:
    return any(len(n) > 4 or int(n) > MAX_REPEAT for n in repeat.groups() if n)


def _class_end(pattern: str, start: int) -> int:
    """The index after the `]` closing the class opened at `start` (a leading `]` is literal)."""
    index = start + 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    while index < len(pattern) and pattern[index] != "]":
        if pattern[index] == "\\":
            index += 1
        elif pattern.startswith("[:", index):
            close = pattern.find(":]", index + 2)
            index = close + 1 if close != -1 else index
        index += 1
    return index + 1


def parse_xml(text: str) -> Element | str:
    """The document's root element, or why it is refused (never an exception).

    The text is already decoded (it came in YAML or JSON), so an XML declaration may name UTF-8
    or nothing: another encoding would decode the bytes wrongly, and Go's encoding/xml, which
    Teleport reads descriptors with, refuses any other encoding without a charset reader.
    DTDs, entities and external references are refused (XXE, entity expansion).
    """
    declared = _DECLARATION.match(text)
    if declared and declared.group(2).strip().lower() not in ("utf-8", "utf8"):
        return (f"declares the encoding `{declared.group(2)[:40]}`; a descriptor given as text is UTF-8: "
                "declare `UTF-8` or no encoding")
    try:
        return fromstring(text.encode("utf-8"), forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException:
        return "is refused: it declares a DTD or entities, which are not allowed (XXE, entity expansion)"
    except ParseError as exc:
        return f"is not well-formed XML ({exc})"
    except (LookupError, ValueError, RecursionError) as exc:
        return f"cannot be read as XML ({type(exc).__name__}: {str(exc)[:80]})"
