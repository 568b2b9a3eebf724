"""The terminal sign-in's answer, sealed so that only the client that asked can open it.

AES-256-GCM under the client's `secret_key` (32 bytes, from its redirect URL), a random 12-byte
nonce, no associated data; the sealed form is base64url without padding of nonce ‖ ciphertext
(design.md). `cryptography` does the AEAD; nothing here is hand-made crypto.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12


class SealError(ValueError):
    """The sealed answer cannot be opened with this key (tampered, truncated or another key)."""


def seal(key: bytes, payload: dict[str, Any]) -> str:
    nonce = os.urandom(NONCE_BYTES)
    sealed = nonce + AESGCM(key).encrypt(nonce, json.dumps(payload).encode(), None)
    return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()


def unseal(key: bytes, text: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        plain = AESGCM(key).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], None)
        value = json.loads(plain)
    except (ValueError, InvalidTag) as exc:
        raise SealError("the sign-in answer cannot be opened with this client's key") from exc
    if not isinstance(value, dict):
        raise SealError("the sign-in answer is not an object")
    return value
