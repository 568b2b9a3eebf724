"""Bounded, strict YAML loading that remembers where every key and value was written.

Why not `YAML(typ="rt")`: the round-trip loader keeps positions but is about nine times slower
than the C safe loader. Instead bot.documents.yamlcompose builds the node graph from the C parser's events
(its nodes carry marks; nesting is bounded there, while composing) and one walk here turns it
into plain Python values plus a pointer → position table. The walk is also
where untrusted input is bounded: size, nesting depth, alias expansion, duplicate and non-string
keys are reported as diagnostics, never as a hang or a crash.

YAML 1.2 is used throughout: `yes` is a string, `True` a boolean, `017` the integer 17. An explicit
tag is read only where it holds its value as YAML 1.2 would read it; `!!float xyz`, `!!bool yes`,
`!!binary` or `!foo` is a `yaml-tag` error at the value, whose value is then not read (None), so
that the schema checks say nothing more about it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any

from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from bot.documents.diagnostics import Diagnostic
from bot.documents.pointers import human_pointer, join_pointer, parent_pointer
from bot.documents.yamlcompose import CORE, ComposeError, Unfit, UnfitScalar, compose_all
from bot.documents.yamllines import Placer

MAX_BYTES = 256 * 1024
MAX_DEPTH = 64  # bounded while composing (bot.documents.yamlcompose), and again where aliases expand
MAX_INT_DIGITS = 1000  # far above any field's range, far below Python's int-to-text limit (4300)
MAX_ALIAS_USES = 100  # references to an already-built node (`*name`, merge keys)
MAX_NODES = 200_000  # values built in all, aliases expanded: no billion laughs

_STR = CORE + "str"
_INT = CORE + "int"
_FLOAT = CORE + "float"
_BOOL = CORE + "bool"
_NULL = CORE + "null"
_TIMESTAMP = CORE + "timestamp"
_MERGE = CORE + "merge"
_MAP = CORE + "map"
_SEQ = CORE + "seq"


@dataclass(slots=True)
class YamlDocument:
    """A loaded document: the plain value, and where each of its parts was written."""

    value: Any
    values: dict[str, tuple[int, int]] = field(default_factory=dict)  # pointer → value position
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)  # pointer → its key's position
    start: tuple[int, int] = (1, 1)

    def locate(self, pointer: str, key: bool = False) -> tuple[int, int]:
        """1-based (line, column) of the node at `pointer`, or of its key; else its nearest parent."""
        if key and pointer in self.keys:
            return self.keys[pointer]
        while True:
            if pointer in self.values:
                return self.values[pointer]
            if not pointer:
                return self.start
            pointer = parent_pointer(pointer)


class _Limit(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class _BadScalar(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _scalar(node: ScalarNode) -> Any:
    tag, text = node.tag, node.value
    if tag == _STR or tag == _TIMESTAMP:
        return text
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return text.lower() == "true"
    if tag == _INT:
        return _integer(text)
    if tag == _FLOAT:
        lowered = text.lower().replace("_", "")
        if lowered.endswith(".inf"):
            return -math.inf if lowered.startswith("-") else math.inf
        if lowered.endswith(".nan"):
            return math.nan
        return float(lowered)
    raise _BadScalar("yaml-tag", _unsupported(str(tag)))


def _tag_name(tag: str) -> str:
    """A tag as it is written: `!!float` for YAML's own, the rest as they resolved."""
    return "!!" + tag.removeprefix(CORE) if tag.startswith(CORE) else tag


def _unsupported(tag: str) -> str:
    return (f"the tag {_tag_name(tag)} is not supported here; remove it (quote the value if it is meant "
            "as a string)")


_KINDS = {_STR: "string", _INT: "integer", _FLOAT: "number", _BOOL: "boolean (true or false)", _NULL: "null",
          _TIMESTAMP: "date or time", _MERGE: "merge key (<<)", _MAP: "mapping", _SEQ: "sequence"}


def _unfit(node: Node) -> str:
    """Why a node's explicit tag cannot hold it (bot.documents.yamlcompose.Unfit), in words for the author."""
    tag = str(node.tag)
    if tag not in _KINDS:
        return _unsupported(tag)
    if isinstance(node, ScalarNode):
        what = repr(node.value[:40] + ("…" if len(node.value) > 40 else ""))
    else:
        what = "a mapping" if isinstance(node, MappingNode) else "a sequence"
    return (f"{_tag_name(tag)} cannot hold {what}: write a {_KINDS[tag]}, or remove the explicit tag")


def _integer(text: str) -> int:
    """A YAML 1.2 integer. A literal of thousands of digits is refused before Python converts it:
    past 4300 decimal digits `int()` raises, and a huge hex value loads but fails when printed."""
    digits = text.replace("_", "")
    if len(digits) > MAX_INT_DIGITS:
        raise _BadScalar("too-large", f"the integer is written with {len(digits)} characters; "
                                      f"the limit is {MAX_INT_DIGITS}")
    try:
        return int(digits, 10)
    except ValueError:
        pass
    try:
        return int(digits, 0)
    except ValueError:
        raise _BadScalar("yaml-syntax", f"{digits[:40]!r} is not an integer") from None


class _Builder:
    """One walk over a composed document: values, positions and every load-level problem."""

    def __init__(self, doc: YamlDocument) -> None:
        self.doc = doc
        self.problems: list[Diagnostic] = []
        self.built: set[int] = set()
        self.alias_uses = 0
        self.nodes = 0

    def problem(self, node: Node, pointer: str, code: str, message: str) -> None:
        line, column = _mark(node)
        self.problems.append(Diagnostic(line, column, pointer, code, message))

    def build(self, node: Node, pointer: str, depth: int) -> Any:
        self._count(node, pointer, depth)
        self.doc.values.setdefault(pointer, _mark(node))
        if isinstance(node, Unfit):
            self.problem(node, pointer, "yaml-tag", f"{human_pointer(pointer)}: {_unfit(node)}")
            return None
        if isinstance(node, ScalarNode):
            try:
                return _scalar(node)
            except _BadScalar as exc:
                self.problem(node, pointer, exc.code, f"{human_pointer(pointer)}: {exc}")
                return None
        if isinstance(node, SequenceNode):
            return [self.build(item, join_pointer(pointer, i), depth + 1) for i, item in enumerate(node.value)]
        if isinstance(node, MappingNode):
            return self._mapping(node, pointer, depth)
        raise _Limit(Diagnostic(*_mark(node), pointer, "yaml-syntax", "unsupported YAML node"))

    def _count(self, node: Node, pointer: str, depth: int) -> None:
        self.nodes += 1
        if depth > MAX_DEPTH:
            raise _Limit(Diagnostic(*_mark(node), pointer, "too-deep",
                                    f"nesting is deeper than {MAX_DEPTH} levels (aliases expanded); "
                                    "flatten the structure"))
        if self.nodes > MAX_NODES:
            raise _Limit(Diagnostic(*_mark(node), pointer, "alias-limit",
                                    f"the document expands to more than {MAX_NODES} values"))
        if isinstance(node, ScalarNode):
            return
        if id(node) in self.built:
            self.alias_uses += 1
            if self.alias_uses > MAX_ALIAS_USES:
                raise _Limit(Diagnostic(*_mark(node), pointer, "alias-limit",
                                        f"more than {MAX_ALIAS_USES} alias references; write the values out"))
        self.built.add(id(node))

    def _mapping(self, node: MappingNode, pointer: str, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_seen: dict[str, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                self._merge(result, key_node, value_node, pointer, depth)
                continue
            if not (isinstance(key_node, ScalarNode) and key_node.tag == _STR):
                self._non_string_key(key_node, pointer)
                continue
            key = key_node.value
            child = join_pointer(pointer, key)
            if key in first_seen:
                line, _ = first_seen[key]
                self.problem(key_node, child, "duplicate-key",
                             f"{human_pointer(child)}: duplicate key {key!r}; first defined at line {line}")
                continue
            first_seen[key] = _mark(key_node)
            self.doc.keys[child] = first_seen[key]
            result[key] = self.build(value_node, child, depth + 1)
        return result

    def _non_string_key(self, key_node: Node, pointer: str) -> None:
        """Reported at the key, and named by it (`/rules/123`) as an unknown property is; a
        collection has no name as a key, so its mapping is named instead. A key whose explicit
        tag cannot hold it is that error, not this one."""
        if isinstance(key_node, UnfitScalar):
            child = join_pointer(pointer, key_node.value)
            self.problem(key_node, child, "yaml-tag", f"{human_pointer(child)}: {_unfit(key_node)}")
        elif isinstance(key_node, ScalarNode):
            child = join_pointer(pointer, key_node.value)
            self.problem(key_node, child, "non-string-key",
                         f"{human_pointer(child)}: keys must be strings; got {key_node.value!r} (quote it)")
        else:
            self.problem(key_node, pointer, "non-string-key",
                         f"{human_pointer(pointer)}: keys must be strings; got a collection")

    def _merge(self, result: dict, key_node: Node, value_node: Node, pointer: str, depth: int) -> None:
        """`<<: *base` is YAML 1.1 and a common way to share rules; support it within the budget."""
        sources = value_node.value if isinstance(value_node, SequenceNode) else [value_node]
        for source in sources:
            if not isinstance(source, MappingNode):
                self.problem(key_node, pointer, "yaml-syntax", f"{human_pointer(pointer)}: `<<` merges mappings only")
                continue
            self._count(source, pointer, depth + 1)
            for key, value in self._mapping(source, pointer, depth + 1).items():
                result.setdefault(key, value)


def _syntax(exc: YAMLError) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return Diagnostic(line, column, "", "yaml-syntax", message)


def _placed(problem: Diagnostic, place: Placer) -> Diagnostic:
    line, column = place(problem.line, problem.column)
    return replace(problem, line=line, column=column)


def _place_all(doc: YamlDocument, found: list[Diagnostic], place: Placer) -> list[Diagnostic]:
    """Every position of a document as editors count lines (nearly always, nothing to do). Only
    an empty scalar at the very end can lie past the last line: the last value built, or the root."""
    last = [next(reversed(doc.values.values()))] if doc.values else []
    if not place.needed(line for line, _ in chain(last, [doc.start], ((p.line, p.column) for p in found))):
        return found
    doc.values = {pointer: place(*where) for pointer, where in doc.values.items()}
    doc.keys = {pointer: place(*where) for pointer, where in doc.keys.items()}
    doc.start = place(*doc.start)
    return [_placed(p, place) for p in found]


def _decode(source: str | bytes, max_bytes: int) -> str | Diagnostic:
    size = len(source.encode("utf-8")) if isinstance(source, str) else len(source)
    if size > max_bytes:
        return Diagnostic(1, 1, "", "too-large", f"the file is {size} bytes; the limit is {max_bytes} bytes "
                                                 f"({max_bytes // 1024} KiB)")
    if isinstance(source, bytes):
        try:
            return source.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return Diagnostic(1, 1, "", "yaml-syntax", f"the file is not UTF-8 text (byte {exc.start})")
    return source


def load_yaml_stream(source: str | bytes, max_bytes: int = MAX_BYTES) -> tuple[list[YamlDocument], list[Diagnostic]]:
    """Every document of a stream; each problem carries its `document` index. `max_bytes`: a
    larger bound only for a file that is data rather than settings (an evaluation corpus)."""
    text = _decode(source, max_bytes)
    if isinstance(text, Diagnostic):
        return [], [text]
    place = Placer(text)
    try:
        nodes = list(compose_all(text, MAX_DEPTH))
    except ComposeError as exc:
        return [], [_placed(exc.diagnostic, place)]
    except YAMLError as exc:
        return [], [_placed(_syntax(exc), place)]
    docs: list[YamlDocument] = []
    problems: list[Diagnostic] = []
    for index, node in enumerate(nodes):
        doc, found = _build(node)
        found = _place_all(doc, found, place)
        docs.append(doc)
        problems.extend(p.in_document(index) for p in found)
    return docs, problems


def load_yaml(source: str | bytes, max_bytes: int = MAX_BYTES) -> tuple[YamlDocument | None, list[Diagnostic]]:
    """One document. An empty file (or comments only) is a document whose value is None."""
    docs, problems = load_yaml_stream(source, max_bytes)
    problems = [Diagnostic(p.line, p.column, p.pointer, p.code, p.message) for p in problems]
    if len(docs) > 1:
        line, column = docs[1].start
        problems.append(Diagnostic(line, column, "", "multiple-documents",
                                   "the file holds more than one YAML document; keep one (remove `---`)"))
        return None, problems
    if not docs:
        return (YamlDocument(None) if not problems else None), problems
    return docs[0], problems


def _build(node: Node) -> tuple[YamlDocument, list[Diagnostic]]:
    doc = YamlDocument(None, start=_mark(node))
    builder = _Builder(doc)
    try:
        doc.value = builder.build(node, "", 0)
    except _Limit as limit:
        doc.value = None
        return doc, [limit.diagnostic]
    return doc, builder.problems
