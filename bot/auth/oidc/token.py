"""The ID token's checks (docs/connectors.md's list), on PyJWT: signature, iss, aud, azp, exp, iat, nonce,
auth_time against max_age, acr against acr_values. Pure: keys and expectations in, claims out.

Only asymmetric algorithms are accepted, and only with a key of their own type from the JWKS: a
token saying `none`, or `HS256` (which would sign with the public key as an HMAC secret), is
refused before any key is touched; `oct` keys in a JWKS are never used.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any

import jwt

from bot.auth.errors import SignInError

SKEW = 120  # seconds of clock skew allowed, both ways
ALGORITHMS = {"RS256": "RSA", "RS384": "RSA", "RS512": "RSA", "PS256": "RSA", "PS384": "RSA", "PS512": "RSA",
              "ES256": "EC", "ES384": "EC", "ES512": "EC", "EdDSA": "OKP"}


class UnknownKey(SignInError):
    """The token's `kid` is not in the key set (the caller refreshes the set once, then gives up)."""

    def __init__(self, kid: str) -> None:
        super().__init__("kid", f"the ID token is signed with key id `{kid[:80]}`, which the provider's JWKS "
                                "does not publish")


@dataclass(frozen=True)
class Expected:
    issuer: str
    client_id: str
    nonce: str
    now: float
    max_age: int | None = None  # seconds; None: not asked
    acr_values: tuple[str, ...] = ()


def header_of(raw: str) -> dict[str, Any]:
    try:
        header = jwt.get_unverified_header(raw)
    except jwt.PyJWTError:
        raise SignInError("id-token", "the provider's ID token is not a JWT") from None
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        raise SignInError("alg", f"the ID token's algorithm `{str(alg)[:20]}` is not accepted (accepted: "
                                 f"{', '.join(ALGORITHMS)}; never `none` or a symmetric one)")
    return header


def key_for(header: dict[str, Any], jwks: dict[str, Any]) -> Any:
    """The verifying key: the JWKS entry with the token's `kid` (or the only one of its type)."""
    kty = ALGORITHMS[header["alg"]]
    usable = [k for k in jwks.get("keys", []) if isinstance(k, dict) and k.get("kty") == kty
              and k.get("use", "sig") == "sig" and k.get("alg", header["alg"]) == header["alg"]]
    kid = header.get("kid")
    if kid is not None:
        usable = [k for k in usable if k.get("kid") == kid]
        if not usable:
            raise UnknownKey(str(kid))
    elif len(usable) != 1:
        raise SignInError("kid", "the ID token names no key id and the provider's JWKS has no single key of "
                                 "its type")
    try:
        return jwt.PyJWK(usable[0], header["alg"]).key
    except jwt.PyJWTError:
        raise SignInError("kid", "the provider's JWKS key for this token cannot be read") from None


_DECODE_ERRORS: list[tuple[type[Exception], str, str]] = [
    (jwt.InvalidSignatureError, "signature", "the ID token's signature does not verify with the provider's key"),
    (jwt.ExpiredSignatureError, "exp", "the ID token has expired (check this server's clock)"),
    (jwt.ImmatureSignatureError, "iat", "the ID token is issued in the future (check the clocks)"),
    (jwt.InvalidAudienceError, "aud", "the ID token is not for this client: its `aud` lacks the connector's "
                                      "client_id"),
    (jwt.InvalidIssuerError, "iss", "the ID token's `iss` is not the provider's issuer"),
    (jwt.MissingRequiredClaimError, "id-token", "the ID token lacks a required claim"),
]


def verify_id_token(raw: str, jwks: dict[str, Any], expected: Expected) -> dict[str, Any]:
    """The verified claims, or SignInError naming the first check that failed."""
    header = header_of(raw)
    key = key_for(header, jwks)
    try:
        claims = jwt.decode(raw, key, algorithms=[header["alg"]], audience=expected.client_id,
                            issuer=expected.issuer, leeway=SKEW,
                            options={"require": ["iss", "aud", "exp", "iat", "sub"], "strict_aud": False})
    except jwt.PyJWTError as exc:
        for kind, check, message in _DECODE_ERRORS:
            if isinstance(exc, kind):
                if isinstance(exc, jwt.MissingRequiredClaimError):
                    message = f"the ID token lacks the required claim `{exc.claim}`"
                raise SignInError(check, message) from None
        raise SignInError("id-token", f"the ID token is malformed ({exc.__class__.__name__})") from None
    _check_claims(claims, expected)
    return claims


def _check_claims(claims: dict[str, Any], expected: Expected) -> None:
    if claims.get("iss") != expected.issuer:  # exact, whatever the library's comparison
        raise SignInError("iss", "the ID token's `iss` is not the provider's issuer")
    if not isinstance(claims.get("iat"), int | float) or claims["iat"] > expected.now + SKEW:
        raise SignInError("iat", "the ID token's `iat` is missing or in the future (check the clocks)")
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    azp = claims.get("azp")
    if (azp is not None or len(audiences) > 1) and azp != expected.client_id:
        raise SignInError("azp", "the ID token's `azp` (authorized party) is not this connector's client_id")
    nonce = claims.get("nonce")
    if not isinstance(nonce, str) or not hmac.compare_digest(nonce.encode(), expected.nonce.encode()):
        raise SignInError("nonce", "the ID token's `nonce` is missing or is not the one this sign-in sent "
                                   "(a replayed or injected token)")
    if expected.max_age is not None:
        auth_time = claims.get("auth_time")
        if not isinstance(auth_time, int | float) or isinstance(auth_time, bool):
            raise SignInError("auth-time", "the connector sets max_age, but the ID token has no `auth_time`")
        if expected.now - auth_time > expected.max_age + SKEW:
            raise SignInError("auth-time", "the authentication at the provider is older than the connector's "
                                           "max_age: sign in at the provider again")
    acr = claims.get("acr")
    if expected.acr_values and acr is not None and acr not in expected.acr_values:
        raise SignInError("acr", f"the ID token's `acr` is not one of the connector's acr_values "
                                 f"({' '.join(expected.acr_values)})")
