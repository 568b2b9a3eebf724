"""Node graphs from the C parser's events, composed without recursion and within a depth bound.

Why not `YAML(typ="safe", pure=False).compose_all`: ruamel's C loader composes by C recursion,
one stack frame per nesting level and no check, so 100,000 `[` (200 KB, under the size limit)
overflow the stack and the process dies of SIGSEGV with no error at all. Its scanner and parser
are iterative (libyaml keeps explicit stacks), so the same C parser's events are read here and
the nodes built with an explicit stack: the first node deeper than the bound ends composition
with its position, after reading only that far. ruamel's Python `Composer` has a `max_depth`
too, but it recurses and takes twice as long as this loop (which is faster than the C composer:
bench/validate.py).

The nodes are ruamel's own, as the C composer makes them (tags resolved as YAML 1.2, anchors and
aliases shared), so bot.documents.yamldoc walks them unchanged; a node whose explicit tag cannot hold it is
of an `Unfit` subclass of the same node class, which bot.documents.yamldoc reports.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ruamel.yaml.cyaml import CParser
from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.tag import Tag

from bot.documents.diagnostics import Diagnostic
from bot.documents.pointers import join_pointer


class _Yaml12Resolver(VersionedResolver):
    """ruamel's tag resolution, always as YAML 1.2 (a `%YAML 1.1` directive changes nothing, as
    with the C loader). Fixed here because the base class looks the version up on its loader
    for every scalar, by two failing attribute lookups: a quarter of the loading time."""

    _resolvers_12: Any  # see versioned_resolver

    @property
    def processing_version(self) -> tuple[int, int]:
        return (1, 2)

    @property
    def versioned_resolver(self) -> Any:
        """YAML 1.2's resolvers, looked up once: the base class finds them again twice a scalar."""
        try:
            return self._resolvers_12
        except AttributeError:
            self._resolvers_12 = super().versioned_resolver
            return self._resolvers_12

    def shared(self, kind: Any, value: Any, implicit: Any) -> Tag:
        """The resolved tag, one Tag object per tag name: ruamel makes a new one for each node,
        which decodes its name again at the node's first `.tag` (yamldoc reads every node's)."""
        tag = self.resolve(kind, value, implicit)
        return _RESOLVED_TAGS.setdefault(tag.suffix, tag)


# The tags implicit resolution gives, by name (a few: YAML 1.2's core schema), shared by every node.
_RESOLVED_TAGS: dict[str, Tag] = {}

CORE = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT = CORE + "str", CORE + "int", CORE + "float"
_MAP, _SEQ = CORE + "map", CORE + "seq"
# The scalar tags whose values implicit resolution recognises: an explicit one holds a value only
# when the value would resolve to it unwritten (a float also holds a decimal integer, as in YAML).
_RESOLVED = frozenset(CORE + name for name in ("int", "float", "bool", "null", "timestamp", "merge"))
_DECIMAL = re.compile(r"[-+]?[0-9][0-9_]*")


class Unfit:
    """A node whose explicit tag cannot hold it (`!!float xyz`, `!!seq {a: 1}`) or is one we do not
    read (`!foo`, `!!binary`, `!!python/object`): bot.documents.yamldoc reports it at its place, as `yaml-tag`,
    and reads no value from it. A mixin, so that the node is still the ruamel node it looks like."""

    __slots__ = ()


class UnfitScalar(ScalarNode, Unfit):
    __slots__ = ()


class UnfitMapping(MappingNode, Unfit):
    __slots__ = ()


class UnfitSequence(SequenceNode, Unfit):
    __slots__ = ()


class ComposeError(Exception):
    """A document that cannot be composed: too deep, or an alias that names nothing usable."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _position(event: Any) -> tuple[int, int]:
    return event.start_mark.line + 1, event.start_mark.column + 1


class _Composer:
    """The state of one stream: open collections (with a mapping's pending key) and anchors."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.resolve = _Yaml12Resolver().shared
        self.open: list[Node] = []
        self.pending: list[Node | None] = []  # per open collection: a mapping's key awaiting its value
        self.anchors: dict[str, Node] = {}
        self.document = -1

    def pointer(self) -> str:
        """Where the next node goes; a node written as a key is placed at its mapping."""
        pointer = ""
        for node, key in zip(self.open, self.pending, strict=True):
            if isinstance(node, SequenceNode):
                pointer = join_pointer(pointer, len(node.value))
            elif isinstance(key, ScalarNode):
                pointer = join_pointer(pointer, key.value)
            else:
                break
        return pointer

    def fail(self, event: Any, code: str, message: str) -> ComposeError:
        return ComposeError(Diagnostic(*_position(event), self.pointer(), code, message, self.document))

    def check_depth(self, event: Any) -> None:
        """A node inside more than `max_depth` collections ends composition, unless it is a scalar
        key: a key belongs to its mapping's level, only the values under it are deeper."""
        if len(self.open) > self.max_depth:
            is_key = isinstance(self.open[-1], MappingNode) and self.pending[-1] is None
            if not (is_key and type(event) in (ScalarEvent, AliasEvent)):
                raise self.fail(event, "too-deep", f"nesting is deeper than {self.max_depth} levels; "
                                                   "flatten the structure")

    def scalar(self, event: Any) -> Node:
        tag = event.ctag
        kind: type[ScalarNode] = ScalarNode
        if tag is None or tag == "!":
            tag = self.resolve(ScalarNode, event.value, event.implicit)
        elif not self.holds(str(tag), event.value):
            kind = UnfitScalar
        node = kind(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        if event.anchor is not None:
            self.anchor(event, node)
        return node

    def holds(self, tag: str, text: str) -> bool:
        """Whether an explicit scalar tag can hold `text`: `!!str` anything; a tag of the core
        schema what resolves to it; any other tag nothing."""
        if tag == _STR:
            return True
        if tag not in _RESOLVED:
            return False
        resolved = self.resolve(ScalarNode, text, (True, False))
        return resolved == tag or (tag == _FLOAT and resolved == _INT and _DECIMAL.fullmatch(text) is not None)

    def collection(self, event: Any, kind: type[SequenceNode] | type[MappingNode]) -> Node:
        tag = event.ctag
        if tag is None or tag == "!":
            tag = self.resolve(kind, None, event.implicit)
        elif str(tag) != (_MAP if kind is MappingNode else _SEQ):
            kind = UnfitMapping if kind is MappingNode else UnfitSequence
        node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
        if event.anchor is not None:
            self.anchor(event, node)
        return node

    def anchor(self, event: Any, node: Node) -> None:
        first = self.anchors.get(event.anchor)
        if first is not None:
            raise self.fail(event, "yaml-syntax", f"invalid YAML: the anchor &{event.anchor} is defined twice; "
                                                  f"first at line {first.start_mark.line + 1}")
        self.anchors[event.anchor] = node

    def alias(self, event: Any) -> Node:
        node = self.anchors.get(event.anchor)
        if node is None:
            raise self.fail(event, "yaml-syntax", f"invalid YAML: the alias *{event.anchor} names no anchor "
                                                  "written before it")
        if any(node is parent for parent in self.open):
            raise self.fail(event, "alias-limit", f"the alias *{event.anchor} is inside the node it names "
                                                  "(a cycle); write the values out")
        return node

    def attach(self, node: Node) -> Node | None:
        """Adds a finished node to its parent; returns it when it is a document's root."""
        if not self.open:
            return node
        parent = self.open[-1]
        if isinstance(parent, SequenceNode):
            parent.value.append(node)
        elif self.pending[-1] is None:
            self.pending[-1] = node
        else:
            parent.value.append((self.pending[-1], node))
            self.pending[-1] = None
        return None

    def feed(self, event: Any) -> Node | None:
        """One event; returns a document's root once it is complete. (Dispatched on the exact
        event class, most frequent first: this loop is most of the cost of loading a file.)"""
        cls = type(event)
        if cls is ScalarEvent:
            self.check_depth(event)
            return self.attach(self.scalar(event))
        if cls is MappingStartEvent or cls is SequenceStartEvent:
            self.check_depth(event)
            self.open.append(self.collection(event, MappingNode if cls is MappingStartEvent else SequenceNode))
            self.pending.append(None)
        elif cls is MappingEndEvent or cls is SequenceEndEvent:
            node = self.open.pop()
            self.pending.pop()
            node.end_mark = event.end_mark
            return self.attach(node)
        elif cls is AliasEvent:
            self.check_depth(event)
            return self.attach(self.alias(event))
        elif cls is DocumentStartEvent:
            self.document += 1
            self.anchors = {}
        return None


def compose_all(text: str, max_depth: int) -> Iterator[Node]:
    """The root node of every document in `text`; raises ComposeError, or the parser's YAMLError."""
    parser = CParser(text)
    composer = _Composer(max_depth)
    try:
        while type(event := parser.get_event()) is not StreamEndEvent:
            root = composer.feed(event)
            if root is not None:
                yield root
    finally:
        parser.dispose()
