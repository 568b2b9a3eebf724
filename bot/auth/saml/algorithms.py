"""Which XML-DSig algorithms a SAML signature may use: SHA-256 or stronger, never SHA-1 (pure).

SHA-1 collisions are practical, so a signature over a SHA-1 digest (or a SHA-1 signature method)
proves little about what was signed. What we sign uses RSA-SHA256 and SHA-256 digests (`SIGN`,
`DIGEST`, given to pysaml2); what we verify — a Response, an Assertion, a logout message's
redirect signature — must use an algorithm of these lists, else it is refused naming the algorithm
(`saml-algorithm`), after pysaml2 and xmlsec1 have checked the signature itself.
"""

from __future__ import annotations

from typing import Any

from saml2.xmldsig import (
    DIGEST_SHA256,
    DIGEST_SHA384,
    DIGEST_SHA512,
    SIG_ECDSA_SHA256,
    SIG_ECDSA_SHA384,
    SIG_ECDSA_SHA512,
    SIG_RSA_SHA256,
    SIG_RSA_SHA384,
    SIG_RSA_SHA512,
)

from bot.auth.errors import SignInError

SIGN = SIG_RSA_SHA256
DIGEST = DIGEST_SHA256
SIGNATURE_METHODS = frozenset({SIG_RSA_SHA256, SIG_RSA_SHA384, SIG_RSA_SHA512,
                               SIG_ECDSA_SHA256, SIG_ECDSA_SHA384, SIG_ECDSA_SHA512})
DIGEST_METHODS = frozenset({DIGEST_SHA256, DIGEST_SHA384, DIGEST_SHA512})
_FIX = "the identity provider must sign with RSA-SHA256 (or stronger) and SHA-256 digests"


def check_signature(signature: Any, where: str) -> None:
    """Refuses a pysaml2 `ds:Signature` (of the Response or the Assertion) whose signature or
    digest method is not SHA-256 or stronger; None (unsigned) passes: other checks require one."""
    if signature is None:
        return
    info = signature.signed_info
    method = getattr(getattr(info, "signature_method", None), "algorithm", None)
    if method not in SIGNATURE_METHODS:
        raise _refused(f"the {where} is signed with `{_shown(method)}`", )
    for reference in getattr(info, "reference", None) or []:
        digest = getattr(getattr(reference, "digest_method", None), "algorithm", None)
        if digest not in DIGEST_METHODS:
            raise _refused(f"the {where}'s signature digests with `{_shown(digest)}`")


def check_sigalg(sigalg: str, kind: str) -> None:
    """Refuses a redirect-binding message (`SigAlg`) signed with anything weaker than SHA-256."""
    if sigalg not in SIGNATURE_METHODS:
        raise _refused(f"the {kind} is signed with `{_shown(sigalg)}`")


def _refused(what: str) -> SignInError:
    return SignInError("saml-algorithm", f"{what}, which is refused (only SHA-256 or stronger is accepted): {_FIX}")


def _shown(algorithm: Any) -> str:
    return str(algorithm)[:100] if algorithm else "no algorithm"
