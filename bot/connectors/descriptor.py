"""SAML entity descriptors (IdP metadata), parsed safely.

The XML goes through `safe_parse.parse_xml`, which refuses DTDs, entity declarations and
external references outright, so a descriptor can neither read local files (XXE) nor expand into
gigabytes (billion laughs), and turns every parser failure into a message.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from bot.connectors.safe_parse import parse_xml

MD = "{urn:oasis:names:tc:SAML:2.0:metadata}"
DS = "{http://www.w3.org/2000/09/xmldsig#}"
REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"


@dataclass(frozen=True)
class Descriptor:
    """What a descriptor supplies; any part may be missing ("" or no certificates).

    Teleport takes a descriptor without an IDPSSODescriptor or a SingleSignOnService when the
    connector's own `issuer`, `sso` and `cert` supply the rest, so a gap is not an error here:
    the reconcile phase decides, knowing the explicit fields.
    """

    entity_id: str
    sso_url: str  # the HTTP-Redirect endpoint if there is one, else HTTP-POST; "" when none
    signing_certificates: list[bytes] = field(default_factory=list)  # DER
    has_idp: bool = True  # whether the entity has an IDPSSODescriptor


def parse_descriptor(xml: str) -> Descriptor | str:
    """The IdP's entityID, SSO location and signing certificates, or what makes it unreadable."""
    root = parse_xml(xml)
    if isinstance(root, str):
        return root
    entity = _idp_entity(root)
    if entity is None:
        return "has no EntityDescriptor: is it SAML metadata?"
    entity_id = entity.get("entityID", "").strip()
    idp = entity.find(f"{MD}IDPSSODescriptor")
    if idp is None:
        return Descriptor(entity_id, "", [], has_idp=False)
    certificates = _signing_certificates(idp)
    if isinstance(certificates, str):
        return certificates
    return Descriptor(entity_id, _sso_location(idp), certificates)


def _idp_entity(root: Element) -> Element | None:
    """The entity that describes an IdP, else the first entity (whose gaps the caller reports)."""
    if root.tag == f"{MD}EntityDescriptor":
        candidates = [root]
    elif root.tag == f"{MD}EntitiesDescriptor":
        candidates = list(root.iter(f"{MD}EntityDescriptor"))
    else:
        return None
    idps = (e for e in candidates if e.find(f"{MD}IDPSSODescriptor") is not None)
    return next(idps, candidates[0] if candidates else None)


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
