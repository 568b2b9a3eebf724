"""JSON pointers over plain documents: read, write and remove one field."""

from __future__ import annotations

from typing import Any


def tokens(pointer: str) -> list[str]:
    if not pointer:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def get_at(doc: Any, pointer: str) -> Any:
    """The value at `pointer`, or None when any step is missing or of another type."""
    node = doc
    for token in tokens(pointer):
        if isinstance(node, dict):
            node = node.get(token)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def set_at(doc: dict, pointer: str, value: Any) -> None:
    """Sets a field whose parent mapping exists (callers only write where they read)."""
    *parents, last = tokens(pointer)
    node = doc
    for token in parents:
        node = node[token]
    node[last] = value
