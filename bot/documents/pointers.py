"""JSON pointers (RFC 6901) over plain documents, and how people name the field one points at.

Every error carries a pointer, and loaders, validators and reconcilers all build, follow and
print them: one module, so `/rules/0/id` reads as `rules[0].id` everywhere.
"""

from __future__ import annotations

from typing import Any


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def tokens(pointer: str) -> list[str]:
    if not pointer:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def join_pointer(pointer: str, token: str | int) -> str:
    return f"{pointer}/{escape_token(str(token))}"


def parent_pointer(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0] if pointer else ""


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


def human_pointer(pointer: str) -> str:
    """`/rules/0/id` → `rules[0].id`: how people name a field."""
    if not pointer:
        return "the document"
    out = ""
    for token in tokens(pointer):
        out += f"[{token}]" if token.isdigit() else (f".{token}" if out else token)
    return f"`{out}`"
