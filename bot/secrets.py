"""Secret references (`secret://NAME/KEY`) and their lookup in the server's secret store.

Shared by connector resources (client secrets, keys) and the engine (provider API keys). The
store is a directory laid out like a mounted Kubernetes secret: `ROOT/NAME/KEY` holds the value.
NAME and KEY are held to Kubernetes' own syntax, which also keeps a reference from
naming anything outside ROOT (no `/`, no `..`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

SCHEME = "secret://"
REDACTED = "<redacted>"
MAX_SECRET_BYTES = 1024 * 1024

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")


@dataclass(frozen=True)
class SecretRef:
    name: str
    key: str

    def __str__(self) -> str:
        return f"{SCHEME}{self.name}/{self.key}"


def is_reference(value: object) -> bool:
    return isinstance(value, str) and value.startswith(SCHEME)


def parse_reference(value: str) -> SecretRef | str:
    """The reference, or why it is malformed (a message that never repeats the value)."""
    rest = value[len(SCHEME):]
    name, sep, key = rest.partition("/")
    if not sep:
        return "a secret reference is `secret://NAME/KEY`; the `/KEY` part is missing"
    if len(name) > 253 or not _NAME.match(name):
        return "the secret NAME must be a lowercase RFC 1123 name (a-z, 0-9, `-`, `.`)"
    if len(key) > 253 or not _KEY.match(key) or key in (".", ".."):
        return "the secret KEY may hold only letters, digits, `-`, `_` and `.`"
    return SecretRef(name, key)


class SecretStore:
    """Looks references up in a directory; with no directory, nothing resolves (design.md)."""

    def __init__(self, root: str | None) -> None:
        self.root = root

    def lookup(self, ref: SecretRef) -> str | None:
        if not self.root:
            return None
        path = os.path.join(self.root, ref.name, ref.key)
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_SECRET_BYTES + 1)
        except OSError:
            return None
        if len(data) > MAX_SECRET_BYTES:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        # Files written with `echo` end in a newline that is not part of the value.
        return text[:-1] if text.endswith("\n") else text
