"""The lookups a review's model may ask for before it answers, offered as chat-completions tools:
`definition(name)`, `callers(name)`, `search(text)` and `read(path, start, end)`.

This module is their edge with the model: the tools' definitions (OpenAI's function-calling
shape), the checks every call's arguments pass before anything is read, and the record of each
call that the check run's notes name. What a lookup reads (the pull request's head for the files
it changes, the repository index for the rest) is bot/index/queries.py's. A call is never
followed when it names an unknown tool, has arguments that are not what its tool takes, or
names a path outside the repository (absolute, with `..`, `.` or empty parts, a backslash or a
control character): it is answered with an error the model can read, and recorded as refused.
Nothing here touches a file system: the head's files come from GitHub (or git) and the rest from
the index, which holds no symbolic links, so no link can lead a read out of the repository.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from bot.index.queries import TOOL_NAMES, Answer, HeadView, Unanswerable, answer
from bot.index.store import IndexStore

log = logging.getLogger("reviewer.engine.lookups")

MAX_ARGUMENTS = 2_000  # characters of one call's arguments (JSON)
MAX_PATH = 1_000
MAX_NAME = 200
MAX_TEXT = 200  # of a search
MAX_LINE = 10_000_000
SHOWN = 80  # characters of an argument in the check run's notes

_SCHEMAS: dict[str, tuple[str, dict[str, dict], tuple[str, ...]]] = {
    "definition": (
        "A name's definition (function, method, class, constant): the pull request's changed files at its head, "
        "the rest at the default branch. With the path and line of a use: the definition that use means.",
        {"name": {"type": "string", "description": "Bare or qualified: `apply`, `Cart.total`, `Error::syntax`."},
         "path": {"type": "string"}, "line": {"type": "integer", "minimum": 1}},
        ("name",)),
    "callers": (
        "The functions that use a function, method, constant or field, one piece each, primary sources first.",
        {"name": {"type": "string"}, "path": {"type": "string", "description": "The file that defines it."}},
        ("name",)),
    "search": (
        "Files that mention words or an identifier, best first, with their matching lines.",
        {"text": {"type": "string"}},
        ("text",)),
    "read": (
        "Lines of a file, its path from the repository root: changed files at the head, others at the default "
        "branch; at most 300 lines a read.",
        {"path": {"type": "string"}, "start": {"type": "integer", "minimum": 1},
         "end": {"type": "integer", "minimum": 1}},
        ("path",)),
}

TOOLS: list[dict] = [
    {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": list(required),
                       "additionalProperties": False}}}
    for name, (description, properties, required) in _SCHEMAS.items()]


class Refused(Exception):
    """A call that is not followed; the message is said to the model and named in the notes."""


@dataclass(frozen=True, slots=True)
class Lookup:
    """One call the model made and what it got."""

    tool: str  # as the model named it (cleaned for the notes)
    shown: str  # its arguments, for the notes
    bytes: int  # of the answer sent back
    refused: str | None = None  # why it was answered with an error
    found: str = ""  # what it returned, in words
    lines: tuple[tuple[str, int, int], ...] = ()  # (path, first, last) of the numbered lines its answer showed

    def describe(self) -> str:
        call = f"{self.tool}({self.shown})"
        if self.refused is not None:
            return f"{call} refused: {self.refused} ({self.bytes:,} bytes)"
        return f"{call} → {self.found} ({self.bytes:,} bytes)"


class Lookups(Protocol):
    """What a tool loop calls: one lookup, answered in at most `limit` bytes."""

    async def lookup(self, tool: str, arguments: str, limit: int) -> tuple[str, Lookup]: ...


def _clean(text: str, limit: int = SHOWN) -> str:
    """A model's text shown in the check run: control characters escaped, backticks dropped, cut."""
    text = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group(0)):02x}", text.replace("`", ""))
    return text if len(text) <= limit else text[:limit] + "…"


def _code(text: str) -> str:
    return f"`{_clean(text)}`"


def repository_path(value: Any) -> str:
    """`value` when it is a path inside the repository, relative to its root; else Refused."""
    if not isinstance(value, str) or not value:
        raise Refused("`path` must be a non-empty string")
    if len(value) > MAX_PATH:
        raise Refused(f"`path` is longer than {MAX_PATH} characters")
    if re.search(r"[\x00-\x1f\x7f]", value):
        raise Refused("`path` holds a control character")
    if "\\" in value:
        raise Refused("`path` holds a backslash: paths in the repository are separated by `/`")
    if value.startswith("/") or re.match(r"^[A-Za-z]:", value):
        raise Refused("`path` is absolute: give a path from the repository root, such as `src/app.py`")
    parts = value.split("/")
    if ".." in parts:
        raise Refused("`path` leaves the repository (`..`): give a path from the repository root")
    if "." in parts or "" in parts:
        raise Refused("`path` has an empty or `.` part: give a path from the repository root, such as `src/app.py`")
    return value


def _text(args: Mapping, key: str, limit: int) -> str:
    value = args[key]
    if not isinstance(value, str) or not value.strip():
        raise Refused(f"`{key}` must be a non-empty string")
    if len(value) > limit:
        raise Refused(f"`{key}` is longer than {limit} characters")
    return value


def _line(args: Mapping, key: str) -> int:
    value = args[key]
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_LINE:
        raise Refused(f"`{key}` must be a line number, an integer of at least 1")
    return value


def check_arguments(tool: str, raw: str) -> dict:
    """The call's arguments when they are what `tool` takes; else Refused, saying what is wrong."""
    if tool not in _SCHEMAS:
        raise Refused(f"there is no tool {_code(tool)}; the tools are {', '.join(TOOL_NAMES)}")
    if len(raw) > MAX_ARGUMENTS:
        raise Refused(f"the arguments are longer than {MAX_ARGUMENTS} characters")
    try:
        args = json.loads(raw or "{}")
    except ValueError:
        raise Refused("the arguments are not a JSON object") from None
    if not isinstance(args, dict):
        raise Refused("the arguments are not a JSON object")
    _, properties, required = _SCHEMAS[tool]
    unknown = sorted(set(args) - set(properties))
    if unknown:
        raise Refused(f"{tool} takes no {', '.join(_code(k) for k in unknown)} "
                      f"(it takes {', '.join(properties)})")
    missing = [k for k in required if k not in args]
    if missing:
        raise Refused(f"{tool} needs {', '.join(f'`{k}`' for k in missing)}")
    checked: dict[str, Any] = {}
    for key in args:
        if key == "path":
            checked[key] = repository_path(args[key])
        elif key in ("line", "start", "end"):
            checked[key] = _line(args, key)
        else:
            checked[key] = _text(args, key, MAX_NAME if key == "name" else MAX_TEXT)
    if "line" in checked and "path" not in checked:
        raise Refused("`line` needs `path`: the file where the name is used on that line")
    if checked.get("end", checked.get("start", 1)) < checked.get("start", 1):
        raise Refused("`end` is before `start`")
    return checked


def shown(tool: str, args: Mapping) -> str:
    """A checked call's arguments as the notes show them."""
    if tool == "read":
        lines = f", {args.get('start', 1)}-{args['end']}" if "end" in args else \
            f", from {args['start']}" if "start" in args else ""
        return _code(args["path"]) + lines
    main = _code(args.get("name", args.get("text", "")))
    where = f", {_code(args['path'])}" + (f":{args['line']}" if "line" in args else "") if "path" in args else ""
    return main + where


def named(tool: str, arguments: str) -> tuple[str, str]:
    """(tool, arguments) as the notes show a call, whether or not it is a valid one."""
    try:
        return _code(tool)[1:-1], shown(tool, check_arguments(tool, arguments))
    except Refused:
        return _code(tool)[1:-1] or "(no name)", _code(arguments)


StoreReader = Callable[[Callable[[IndexStore], Answer]], Awaitable[Answer]]


class RepositoryLookups:
    """The lookups of one review: `read` runs a function over the repository's index (in a thread,
    with the index open), `head` holds the changed files at the pull request's head."""

    def __init__(self, read: StoreReader, head: HeadView) -> None:
        self._read, self._head = read, head

    async def lookup(self, tool: str, arguments: str, limit: int) -> tuple[str, Lookup]:
        name, what = _code(tool)[1:-1] or "(no name)", _code(arguments)
        try:
            args = check_arguments(tool, arguments)
            what = shown(tool, args)
            head = self._head
            found = await self._read(lambda store: answer(store, head, tool, args, limit))
        except Refused as exc:
            return _reply(f"Error: {exc}", Lookup(name, what, 0, str(exc)))
        except Unanswerable as exc:
            return _reply(f"Nothing found: {exc}", Lookup(name, what, 0, found=f"nothing: {_clean(str(exc))}"))
        except Exception:  # the index helps a review and never stops one
            log.exception("lookup %s failed", name)
            return _reply("Error: the repository index could not be read; answer from what you have",
                          Lookup(name, what, 0, "the repository index could not be read"))
        return _reply(found.text, Lookup(name, what, 0, found=_clean(found.found, 160), lines=found.shown))


def _reply(text: str, record: Lookup) -> tuple[str, Lookup]:
    return text, replace(record, bytes=len(text.encode("utf-8")))
