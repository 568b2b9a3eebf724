"""Bounded JSON parsing for bodies from the network: resource API requests and GitHub deliveries.

`json.loads` has no bound of its own on nesting (only the interpreter's recursion limit, hit at
about 1,000 levels as a RecursionError that says nowhere) and raises a bare ValueError for an
integer of more than 4,300 digits. Both the resource API and the webhook dispatcher parse here,
so that their bounds are written once, and are the YAML loader's: nesting deeper than MAX_DEPTH
is `too-deep` and an integer of more than MAX_INT_DIGITS digits is `too-large`, each named by the
JSON pointer of the first value past the bound.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bot.documents.pointers import human_pointer, join_pointer
from bot.documents.yamldoc import MAX_DEPTH, MAX_INT_DIGITS

# `\uD800`-`\uDFFF` escapes: a pair is one character, a lone one is no character at all.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")

# A string (to its closing quote, or to the end of a text that has none: linear whatever the
# text), or an opening bracket: what `count_containers` reads when a plain count of brackets is past
# its cap.
_STRING_OR_OPENING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\Z)|[\[{]', re.S)

# What matters to nesting in JSON text: strings (skipped whole, so brackets inside them do not
# count; an object's keys are read from them), brackets and commas.
_TOKENS = re.compile(r'"(?:[^"\\]+|\\.)*"|[\[\]{},]')


class JsonBodyError(ValueError):
    """A body that is not JSON (`code` "syntax", no pointer) or breaks a bound (`too-deep`,
    `too-large`, with the pointer of the offending value)."""

    def __init__(self, code: str, pointer: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.pointer = pointer
        self.message = message


@dataclass(frozen=True, slots=True)
class _LongInteger:
    """Stands in for an integer too long for `int()` (only when parsing again after json.loads
    refused one), so that the walk below finds it with its place."""

    digits: int


def _integer(text: str) -> int | _LongInteger:
    digits = len(text) - text.startswith("-")
    return int(text) if digits <= MAX_INT_DIGITS else _LongInteger(digits)


def count_containers(text: bytes | bytearray, cap: int) -> int:
    """How many objects and arrays the JSON text opens, counted without parsing it: at most `cap`,
    or a number past `cap` (counting stops there). A parsed container costs tens of bytes however
    few bytes of text it takes (`{}`), so a caller bounds their number before parsing. The plain
    count of brackets is an upper bound; only when it is past `cap` are strings (which may hold
    brackets) skipped, in one pass of the text."""
    rough = text.count(b"{") + text.count(b"[")
    if rough <= cap:
        return rough
    count = 0
    for match in _STRING_OR_OPENING.finditer(text):
        if match.end() - match.start() == 1 and text[match.start()] != 0x22:  # a bracket, not a lone `"`
            count += 1
            if count > cap:
                break
    return count


def parse_json(raw: bytes | str) -> Any:
    """The value of a UTF-8 JSON text within the bounds; raises JsonBodyError."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer past Python's own digit limit: parse again to find it
            value = json.loads(text, parse_int=_integer)
    except UnicodeDecodeError as exc:
        raise JsonBodyError("syntax", "", f"the body is not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise JsonBodyError("syntax", "", f"the body is not valid JSON (line {exc.lineno}, column {exc.colno}): "
                                          f"{exc.msg}") from None
    except RecursionError:  # far past MAX_DEPTH: find where the bound was crossed in the text
        raise _too_deep(_deep_pointer(text)) from None
    _check(value)
    if _SURROGATE_ESCAPE.search(text):
        _check_text(value)
    return value


def _check_text(value: Any) -> None:
    """JSON may escape half of a UTF-16 pair alone (`"\\ud800"`); Python keeps it as a string
    that no UTF-8 encoder takes, so storing or printing it would fail far from here. Refused as
    text that is not Unicode, at its place. Only bodies that contain such an escape pay for it."""
    stack: list[tuple[Any, str, str]] = [(value, "", "")]
    while stack:
        node, pointer, what = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):  # the text itself is not repeated: it cannot be printed
                raise JsonBodyError("syntax", pointer, f"the body is not valid JSON: {what}{human_pointer(pointer)} "
                                                       "holds half of a UTF-16 surrogate pair (a lone \\uD800-"
                                                       "\\uDFFF escape), which is no character")
        elif isinstance(node, dict):
            for key, child in node.items():
                stack += [(key, pointer, "a key of "), (child, join_pointer(pointer, key), "")]
        elif isinstance(node, list):
            stack += [(child, join_pointer(pointer, index), "") for index, child in enumerate(node)]


def _too_deep(pointer: str) -> JsonBodyError:
    return JsonBodyError("too-deep", pointer, f"{human_pointer(pointer)}: nesting is deeper than {MAX_DEPTH} levels")


def _too_large(pointer: str, digits: int) -> JsonBodyError:
    return JsonBodyError("too-large", pointer, f"{human_pointer(pointer)}: the integer has {digits} digits; "
                                               f"the limit is {MAX_INT_DIGITS}")


_BIG = 10 ** MAX_INT_DIGITS
_Entry = tuple[Any, int, Any, Any]  # (value, depth, the parent's entry, the key or index in the parent)


def _pointer(entry: _Entry | None) -> str:
    steps = []
    while entry is not None:
        _, _, entry, key = entry
        if entry is not None:
            steps.append(key)
    pointer = ""
    for key in reversed(steps):
        pointer = join_pointer(pointer, key)
    return pointer


def _check(value: Any) -> None:
    """The first value past a bound, in document order. This runs on every webhook body, so a
    first pass (`_within`) only asks whether anything breaks a bound; only a document that does
    is walked again, without recursion, to find the first such value and build its pointer.
    A container at MAX_DEPTH that holds anything is the crossing, whatever it holds."""
    cls = type(value)
    if (cls is dict or cls is list) and _within(value, 0):
        return
    stack: list[_Entry] = [(value, 0, None, None)] if _visited(value) else []
    while stack:
        entry = stack.pop()
        node, depth = entry[0], entry[1]
        cls = type(node)
        if cls is int or cls is _LongInteger:
            digits = node.digits if cls is _LongInteger else len(str(abs(node)))
            raise _too_large(_pointer(entry), digits)
        items = node.items() if cls is dict else enumerate(node)
        if depth == MAX_DEPTH and node:
            raise _too_deep(_pointer((None, 0, entry, next(iter(items))[0])))
        stack.extend(reversed([(child, depth + 1, entry, key) for key, child in items  # _visited(), inlined
                               if (t := type(child)) is dict or t is list or t is _LongInteger
                               or (t is int and not -_BIG < child < _BIG)]))


def _within(node: dict | list, depth: int) -> bool:
    """Whether no value under the container at `depth` breaks a bound. Several times faster than
    the walk of `_check` (no entry per container, no stack): its recursion is bounded by MAX_DEPTH,
    as a container at that depth fails if it holds anything."""
    if depth == MAX_DEPTH:
        return not node
    for child in node.values() if type(node) is dict else node:
        cls = type(child)
        if cls is dict or cls is list:
            if not _within(child, depth + 1):
                return False
        elif cls is int:
            if not -_BIG < child < _BIG:
                return False
        elif cls is _LongInteger:
            return False
    return True


def _visited(value: Any) -> bool:
    """A container, or an integer past the bound."""
    cls = type(value)
    return cls is dict or cls is list or cls is _LongInteger or (cls is int and not -_BIG < value < _BIG)


def _deep_pointer(text: str) -> str:
    """The pointer of the first container opened inside MAX_DEPTH others, read from the text
    (the parser gave up before building anything)."""
    path: list[list[Any]] = []  # per open container: [is an object, key or index, expecting a key]
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            if len(path) > MAX_DEPTH:
                break
            path.append([token == "{", None if token == "{" else 0, token == "{"])
        elif token in "]}":
            if path:
                path.pop()
        elif not path:
            continue
        elif token == ",":
            top = path[-1]
            top[2] = top[0]
            if not top[0]:
                top[1] += 1
        elif path[-1][2]:  # a string where an object expects its key
            path[-1][1:] = [_key(token), False]
    pointer = ""
    for _, key, _ in path:
        pointer = join_pointer(pointer, "" if key is None else key)
    return pointer


def _key(token: str) -> str:
    try:
        return json.loads(token)
    except ValueError:  # past the crossing the text was never checked: keep the key as written
        return token[1:-1]
