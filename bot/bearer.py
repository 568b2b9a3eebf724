"""The admin bearer token that guards the resource API and the admin API, checked one way for both."""

from __future__ import annotations

import hmac


def bearer_matches(authorization: str, token: bytes | None) -> bool:
    """True when an `Authorization` header is `Bearer <token>`, compared in constant time.

    With no token configured nothing matches: an API left without a token is closed, not open.
    """
    scheme, _, offered = authorization.partition(" ")
    if token is None or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(offered.strip().encode(), token)
