"""A connector's YAML as its author wrote it: order and comments kept across the console's views.

The store keeps connector objects as data, which loses the author's key order and comments. The
console keeps the text an operator applied beside it (redacted: a literal secret becomes
`<redacted>` before it is kept, as every answer shows it), and shows that text again with the
stored object's current values written into it by ruamel.yaml's round-trip mode: keys the object
no longer has go, new ones are added at the end of their mapping, changed values replace the old,
and everything else — order, comments, quoting — stays. An object changed through the resource
API after the console applied it is thus shown as it is now, in its author's layout.
Pure: text and objects in, text out.
"""

from __future__ import annotations

import io
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from bot.connectors.kinds import ConnectorKind
from bot.documents.pointers import tokens
from bot.secrets.references import REDACTED, is_reference


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # long values (URLs, CEL) stay on their line
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def _dump(node: Any) -> str:
    out = io.StringIO()
    _yaml().dump(node, out)
    return out.getvalue()


def _load(text: str) -> Any:
    try:
        return _yaml().load(text)
    except YAMLError:
        return None


def kept_text(kind: ConnectorKind, text: str) -> str | None:
    """The text to keep for an applied connector: literal secrets replaced by `<redacted>` (a
    `secret://` reference stays); None when it is not one mapping (nothing worth keeping)."""
    node = _load(text)
    if not isinstance(node, CommentedMap):
        return None
    for pointer in kind.secret_pointers:
        parent, last = _parent(node, pointer)
        if parent is not None and isinstance(parent.get(last), str) and parent[last] \
                and not is_reference(parent[last]):
            parent[last] = REDACTED
    return _dump(node)


def _parent(node: Any, pointer: str) -> tuple[Any, str]:
    *steps, last = tokens(pointer)
    for step in steps:
        node = node.get(step) if isinstance(node, dict) else None
    return (node, last) if isinstance(node, dict) else (None, last)


def shown_text(kept: str | None, current: dict[str, Any]) -> str | None:
    """The kept text with `current` (the object as an answer shows it) written into it; None when
    nothing usable was kept (the caller shows `current` in the default layout)."""
    node = _load(kept) if kept else None
    if not isinstance(node, CommentedMap):
        return None
    return _dump(_merged(node, current))


def _merged(node: Any, value: Any) -> Any:
    if isinstance(node, CommentedMap) and isinstance(value, dict):
        for key in [k for k in node if k not in value]:
            del node[key]
        for key, item in value.items():
            node[key] = _merged(node[key], item) if key in node else item
        return node
    if isinstance(node, CommentedSeq) and isinstance(value, list) and len(node) == len(value):
        for index, item in enumerate(value):
            node[index] = _merged(node[index], item)
        return node
    if node == value and isinstance(node, bool) == isinstance(value, bool):
        return node  # the same value: its quoting and style as written
    return value
