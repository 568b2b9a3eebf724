"""What verifying a SAML answer costs against verifying an OIDC ID token, in the same run.

SAML: `bot.auth.saml.verify` on a real response of pysaml2's IdP (assertion signed with RSA-2048),
which builds the connector's pysaml2 client and runs the `xmlsec1` binary to check the signature;
with `--encrypted`, the assertion is encrypted too (a second xmlsec1 run). OIDC:
`verify_id_token` on an RS256 ID token (PyJWT, in process). Each is timed for a number of
verifications, a few rounds alternating, the best kept (the machine is shared). Printed:
verifications a second and the ratio. Needs xmlsec1.

Usage: python bench/saml.py [--count N] [--rounds R] [--encrypted]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import jwt  # noqa: E402

from bot.auth.oidc.token import Expected, verify_id_token  # noqa: E402
from bot.auth.saml import protocol as saml  # noqa: E402
from bot.auth.saml.settings import KeyPair, SamlSettings  # noqa: E402
from tests.support.saml_support import SamlIdP, make_pair  # noqa: E402


def saml_case(encrypted: bool) -> tuple[SamlSettings, bytes]:
    idp = SamlIdP(encrypt=encrypted)
    idp.url, idp._dir = "http://127.0.0.1:1", tempfile.mkdtemp(prefix="bench-saml-")
    sp = make_pair("bench sp")
    settings = SamlSettings(name="corp", display="corp", acs="http://127.0.0.1:2/v1/webapi/saml/acs/corp",
                            sp_issuer="http://127.0.0.1:2/sp", audience="http://127.0.0.1:2/sp",
                            idp_issuer=idp.entity_id, sso=idp.url + "/sso", idp_certs=(idp.pair.cert_pem,),
                            force_authn=False, assertion=KeyPair(sp.cert_pem, sp.key_pem) if encrypted else None)
    idp.sp_metadata = saml.metadata(settings)
    return settings, idp.response_xml(settings.acs, "id-bench", settings.audience).encode()


def oidc_case() -> tuple[str, dict, Expected]:
    pair = make_pair("bench op")
    now = time.time()
    claims = {"iss": "https://op.example", "aud": "client", "sub": "u", "nonce": "n", "iat": int(now),
              "exp": int(now) + 600, "email": "alice@example.com"}
    raw = jwt.encode(claims, pair.key_pem, algorithm="RS256", headers={"kid": "k"})
    from cryptography import x509
    public = x509.load_pem_x509_certificate(pair.cert_pem.encode()).public_key()
    jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(public)), "kid": "k", "alg": "RS256", "use": "sig"}
    return raw, {"keys": [jwk]}, Expected("https://op.example", "client", "n", now)


def rate(work, count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        work()
    return count / (time.perf_counter() - start)


def main(count: int, rounds: int, encrypted: bool) -> None:
    settings, xml = saml_case(encrypted)
    raw, jwks, expected = oidc_case()
    assert saml.verify(settings, xml, "id-bench").username == "alice@example.com"
    best = {"oidc id token": 0.0, "saml response": 0.0}
    for _ in range(rounds):
        best["oidc id token"] = max(best["oidc id token"], rate(lambda: verify_id_token(raw, jwks, expected),
                                                                count * 20))
        best["saml response"] = max(best["saml response"], rate(lambda: saml.verify(settings, xml, "id-bench"),
                                                                count))
    saml.KEY_FILES.remove()
    for name, value in best.items():
        print(f"{name:14} {value:9.1f} verifications/s")
    print(f"saml / oidc: {best['saml response'] / best['oidc id token']:.3f}x the throughput"
          f"{' (encrypted assertion)' if encrypted else ''}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--encrypted", action="store_true")
    args = parser.parse_args()
    main(args.count, args.rounds, args.encrypted)
