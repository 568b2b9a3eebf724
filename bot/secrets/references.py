"""Secret references (`secret://NAME/KEY`) and their lookup in the server's secret store.

Shared by connector resources (client secrets, keys) and the engine (provider API keys): both
go through `resolve`, so the parse, the look-up and the errors are one piece of code. The store
is a directory laid out like a mounted Kubernetes secret: `ROOT/NAME/KEY` holds the value.
NAME and KEY are held to Kubernetes' own syntax (no `/`, no `..`), and the file found must lie
inside ROOT once every symlink is resolved — Kubernetes' own `..data` links stay inside, a link
to `/etc/passwd` does not — and be a regular file (a FIFO would block the reader for ever).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass

SCHEME = "secret://"
REDACTED = "<redacted>"
MAX_SECRET_BYTES = 1024 * 1024
# Secrets the server itself reads (bot/github/credentials.py: the GitHub App's private key and
# webhook secret): no sign-in connector may read them, whatever the connector is called.
GITHUB_APP_SECRET = "github-app"
SERVER_SECRET_NAMES = frozenset({GITHUB_APP_SECRET})

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


class SecretError(Exception):
    """A reference that does not resolve. The message names the reference's parts, never a value;
    `malformed` tells a reference written wrong from one the store cannot answer."""

    def __init__(self, message: str, *, malformed: bool = False) -> None:
        super().__init__(message)
        self.malformed = malformed


class SecretStore:
    """Looks references up in a directory; with no directory, nothing resolves (docs/connectors.md)."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = os.fspath(root) if root else None

    def lookup(self, ref: SecretRef) -> str | None:
        """The value, or None when there is none to read inside the store."""
        if not self.root:
            return None
        data = _read_inside(self.root, os.path.join(self.root, ref.name, ref.key))
        if data is None:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        # Files written with `echo` end in a newline that is not part of the value.
        return text[:-1] if text.endswith("\n") else text


def _read_inside(root: str, path: str) -> bytes | None:
    """At most MAX_SECRET_BYTES of the regular file at `path`, which must resolve inside `root`."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root or real == real_root:
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_SECRET_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= MAX_SECRET_BYTES else None


def referenced_names(value: object) -> frozenset[str]:
    """The secret NAMEs of every well-formed `secret://NAME/KEY` anywhere in `value` (nested
    mappings and lists, such as a loaded YAML document): which secrets a document reads."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            ref = parse_reference(item) if is_reference(item) else None
            if isinstance(ref, SecretRef):
                found.add(ref.name)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return frozenset(found)


def resolve(reference: str, store: SecretStore) -> str:
    """The value `secret://NAME/KEY` points to; SecretError says why there is none."""
    ref = parse_reference(reference)
    if isinstance(ref, str):
        raise SecretError(ref, malformed=True)
    if not store.root:
        raise SecretError("no secret store is configured (REVIEWER_SECRETS_DIR is unset)")
    value = store.lookup(ref)
    if value is None:
        raise SecretError(f"the secret store does not hold it: create key `{ref.key}` in secret `{ref.name}` "
                          "(a regular UTF-8 file of at most 1 MiB inside the store), or fix the reference")
    if not value:
        raise SecretError("the secret store holds it empty: put the secret's value there")
    return value
