"""AES-256-GCM sealing, written once: the terminal sign-in's answer (bot.auth.sealing) and the
installation tokens shared between processes (bot.github.coordination) both use it.

A sealed value is a random 12-byte nonce ‖ ciphertext (with its tag). `associated` binds the
sealed value to a context it is not stored with (an installation id): opened under another, it
fails like a wrong key. `cryptography` does the AEAD; nothing here is hand-made crypto.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12


class OpenError(ValueError):
    """The sealed bytes cannot be opened: tampered, truncated, another key or another context."""


def seal_bytes(key: bytes, plain: bytes, associated: bytes | None = None) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(key).encrypt(nonce, plain, associated)


def open_bytes(key: bytes, sealed: bytes, associated: bytes | None = None) -> bytes:
    if len(sealed) <= NONCE_BYTES:
        raise OpenError("the sealed value is too short")
    try:
        return AESGCM(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], associated)
    except (InvalidTag, ValueError) as exc:
        raise OpenError("the sealed value cannot be opened with this key and context") from exc
