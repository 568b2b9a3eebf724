"""SAML single logout (`single_logout_url`), HTTP-Redirect binding, through pysaml2 (the endpoint
is bot/server/signin/saml_logout.py):

- logging out of a SAML session sends the browser to the IdP with a signed LogoutRequest
  (its NameID and SessionIndex kept at sign-in), and the IdP's LogoutResponse comes back to
  `GET /v1/webapi/saml/slo/{name}`, checked against the pending request (single use);
- an IdP-initiated LogoutRequest at the same endpoint ends every session of that NameID through
  that connector (whatever its SessionIndex: ending more is the safe side), and is answered with a
  LogoutResponse.

A message is read only when its redirect signature (`SigAlg`/`Signature`) verifies with the IdP's
certificate: an unsigned LogoutRequest could otherwise sign anyone out. `SigAlg` must be SHA-256 or
stronger (bot/auth/saml/algorithms.py); ours are RSA-SHA256.
"""

from __future__ import annotations

from typing import Any

from saml2 import BINDING_HTTP_REDIRECT
from saml2.saml import NAMEID_FORMAT_UNSPECIFIED, NameID

from bot.auth.errors import SignInError
from bot.auth.saml import protocol as saml
from bot.auth.saml.algorithms import check_sigalg
from bot.auth.saml.settings import SamlSettings, pem_body


def logout_request_url(settings: SamlSettings, name_id: str, session_index: str | None) -> tuple[str, str]:
    """(request id, the IdP URL carrying the signed LogoutRequest)."""
    client = saml.client_for(settings)
    request_id, request = client.create_logout_request(
        settings.single_logout_url, settings.idp_issuer,
        name_id=NameID(text=name_id, format=NAMEID_FORMAT_UNSPECIFIED),
        session_indexes=[session_index] if session_index else None, sign=False)
    info = client.apply_binding(BINDING_HTTP_REDIRECT, str(request), settings.single_logout_url, sign=True)
    return request_id, dict(info["headers"])["Location"]


def _signed(settings: SamlSettings, query: dict[str, str], kind: str) -> None:
    if not query.get("SigAlg") or not query.get("Signature"):
        raise SignInError("slo-signature", f"the {kind} is not signed (SigAlg and Signature are required)")
    check_sigalg(query["SigAlg"], kind)
    from saml2.sigver import verify_redirect_signature  # with the client: at the first SAML use (protocol.py)

    message = {k: query[k] for k in ("SAMLRequest", "SAMLResponse", "RelayState", "SigAlg", "Signature")
               if k in query}
    backend = saml.client_for(settings).sec.sec_backend
    for cert in settings.idp_certs:
        try:
            if verify_redirect_signature(message, backend, cert=pem_body(cert)):
                return
        except Exception:  # pysaml2 raises for unknown algorithms and bad encodings alike
            continue
    raise SignInError("slo-signature", f"the {kind}'s signature is not the identity provider's")


def read_logout_request(settings: SamlSettings, query: dict[str, str]) -> Any:
    _signed(settings, query, "LogoutRequest")
    try:
        parsed = saml.client_for(settings).parse_logout_request(query["SAMLRequest"], BINDING_HTTP_REDIRECT)
    except Exception as exc:
        raise SignInError("slo-request", f"the LogoutRequest was refused ({exc.__class__.__name__})") from None
    message = parsed.message if parsed is not None else None
    if message is None or message.issuer is None or (message.issuer.text or "").strip() != settings.idp_issuer:
        raise SignInError("slo-request", "the LogoutRequest is not from the connector's identity provider")
    if message.name_id is None or not (message.name_id.text or "").strip():
        raise SignInError("slo-request", "the LogoutRequest names no NameID")
    return message


def logout_response_url(settings: SamlSettings, request: Any) -> str:
    client = saml.client_for(settings)
    response = client.create_logout_response(request, [BINDING_HTTP_REDIRECT])
    info = client.apply_binding(BINDING_HTTP_REDIRECT, str(response), settings.single_logout_url, response=True,
                                sign=settings.signing is not None)
    return str(dict(info["headers"])["Location"])


def read_logout_response(settings: SamlSettings, query: dict[str, str]) -> str | None:
    _signed(settings, query, "LogoutResponse")
    try:
        parsed = saml.client_for(settings).parse_logout_request_response(query["SAMLResponse"],
                                                                        BINDING_HTTP_REDIRECT)
    except Exception as exc:
        raise SignInError("slo-response", f"the LogoutResponse was refused ({exc.__class__.__name__})") from None
    if parsed is None:
        raise SignInError("slo-response", "the LogoutResponse cannot be read")
    return parsed.response.in_response_to
