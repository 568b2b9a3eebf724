"""The service's own signing key: it signs OIDC request objects (`request_object_mode: signed`)
and its public half is served at `GET /.well-known/jwks.json` for providers to verify them.

One RSA key, made on first use and kept in the sign-in store so every process signs with the same
key. PyJWT signs; the key id is the RFC 7638 thumbprint of the public key.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

KEY_NAME = "request-object-rs256"
ALGORITHM = "RS256"


def make_private_pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def public_jwk(private_pem: str) -> dict[str, Any]:
    private = serialization.load_pem_private_key(private_pem.encode(), password=None)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))  # type: ignore[arg-type]
    members = json.dumps({"e": jwk["e"], "kty": "RSA", "n": jwk["n"]}, separators=(",", ":"), sort_keys=True)
    kid = base64.urlsafe_b64encode(hashlib.sha256(members.encode()).digest()).rstrip(b"=").decode()
    return {"kty": "RSA", "n": jwk["n"], "e": jwk["e"], "kid": kid, "use": "sig", "alg": ALGORITHM}


def sign_request_object(private_pem: str, claims: dict[str, Any]) -> str:
    kid = public_jwk(private_pem)["kid"]
    return jwt.encode(claims, private_pem, algorithm=ALGORITHM, headers={"kid": kid, "typ": "oauth-authz-req+jwt"})
