"""PEM certificates and private keys, parsed for real with `cryptography`.

Messages say what is wrong with the material, never what it contains: a private key is a secret.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

_CERT_HEADER = "-----BEGIN CERTIFICATE-----"


def load_certificate(text: str) -> x509.Certificate | str:
    """The certificate, or why the text is not one PEM X.509 certificate."""
    if _CERT_HEADER not in text:
        return f"is not a PEM certificate: it needs a `{_CERT_HEADER}` block"
    try:
        return x509.load_pem_x509_certificate(text.encode("utf-8"))
    except (ValueError, UnsupportedAlgorithm):
        return "is not a valid PEM X.509 certificate: its content does not decode"


def load_der_certificate(data: bytes) -> x509.Certificate | str:
    try:
        return x509.load_der_x509_certificate(data)
    except (ValueError, UnsupportedAlgorithm):
        return "is not a valid X.509 certificate"


def load_private_key(text: str) -> PrivateKeyTypes | str:
    """The key, or why the text is not one unencrypted PEM private key."""
    if "-----BEGIN" not in text or "PRIVATE KEY-----" not in text:
        return "is not a PEM private key: it needs a `-----BEGIN PRIVATE KEY-----` block"
    try:
        return serialization.load_pem_private_key(text.encode("utf-8"), password=None)
    except TypeError:
        return "is an encrypted private key; provide it unencrypted (through a secret reference)"
    except (ValueError, UnsupportedAlgorithm):
        return "is not a valid PEM private key: its content does not decode"


def _public_der(key: object) -> bytes:
    return key.public_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def key_matches_certificate(key: PrivateKeyTypes, cert: x509.Certificate) -> bool:
    return _public_der(key.public_key()) == _public_der(cert.public_key())
