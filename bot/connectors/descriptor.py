"""SAML entity descriptors (IdP metadata), parsed safely.

defusedxml refuses DTDs, entity declarations and external references outright, so a descriptor
can neither read local files (XXE) nor expand into gigabytes (billion laughs).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

MD = "{urn:oasis:names:tc:SAML:2.0:metadata}"
DS = "{http://www.w3.org/2000/09/xmldsig#}"
REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"


@dataclass(frozen=True)
class Descriptor:
    entity_id: str
    sso_url: str  # the HTTP-Redirect endpoint if there is one, else HTTP-POST
    signing_certificates: list[bytes] = field(default_factory=list)  # DER


def parse_descriptor(xml: str) -> Descriptor | str:
    """The IdP's entityID, SSO location and signing certificates, or what is wrong."""
    try:
        root = fromstring(xml.encode("utf-8"), forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException:
        return "is refused: it declares a DTD or entities, which are not allowed (XXE, entity expansion)"
    except ParseError as exc:
        return f"is not well-formed XML ({exc})"
    entity = _idp_entity(root)
    if entity is None:
        return "has no EntityDescriptor with an IDPSSODescriptor (is it the SP's metadata?)"
    entity_id = entity.get("entityID", "").strip()
    if not entity_id:
        return "has no entityID on its EntityDescriptor"
    idp = entity.find(f"{MD}IDPSSODescriptor")
    assert idp is not None  # _idp_entity picked an entity that has one
    sso_url = _sso_location(idp)
    if not sso_url:
        return "has no SingleSignOnService with an HTTP-Redirect or HTTP-POST Location"
    certificates = _signing_certificates(idp)
    if isinstance(certificates, str):
        return certificates
    return Descriptor(entity_id, sso_url, certificates)


def _idp_entity(root: Element) -> Element | None:
    if root.tag == f"{MD}EntityDescriptor":
        candidates = [root]
    elif root.tag == f"{MD}EntitiesDescriptor":
        candidates = list(root.iter(f"{MD}EntityDescriptor"))
    else:
        return None
    return next((e for e in candidates if e.find(f"{MD}IDPSSODescriptor") is not None), None)


def _sso_location(idp: Element) -> str:
    by_binding = {s.get("Binding"): s.get("Location", "").strip() for s in idp.findall(f"{MD}SingleSignOnService")}
    return by_binding.get(REDIRECT) or by_binding.get(POST) or ""


def _signing_certificates(idp: Element) -> list[bytes] | str:
    found: list[bytes] = []
    for key in idp.findall(f"{MD}KeyDescriptor"):
        if key.get("use", "signing") != "signing":
            continue
        for cert in key.iter(f"{DS}X509Certificate"):
            text = "".join((cert.text or "").split())
            try:
                found.append(base64.b64decode(text, validate=True))
            except (binascii.Error, ValueError):
                return "has an X509Certificate that is not base64"
    return found
