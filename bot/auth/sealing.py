"""The terminal sign-in's answer, sealed so that only the client that asked can open it.

AES-256-GCM under the client's `secret_key` (32 bytes, from its redirect URL), a random 12-byte
nonce, no associated data; the sealed form is base64url without padding of nonce ‖ ciphertext
(docs/connectors.md); bot.secrets.aead does the AEAD.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from bot.secrets.aead import OpenError, open_bytes, seal_bytes


class SealError(ValueError):
    """The sealed answer cannot be opened with this key (tampered, truncated or another key)."""


def seal(key: bytes, payload: dict[str, Any]) -> str:
    sealed = seal_bytes(key, json.dumps(payload).encode())
    return base64.urlsafe_b64encode(sealed).rstrip(b"=").decode()


def unseal(key: bytes, text: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        value = json.loads(open_bytes(key, raw))
    except (ValueError, OpenError) as exc:
        raise SealError("the sign-in answer cannot be opened with this client's key") from exc
    if not isinstance(value, dict):
        raise SealError("the sign-in answer is not an object")
    return value
