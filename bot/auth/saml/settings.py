"""A stored SAML connector, read as the settings one sign-in uses (pure).

The identity provider comes from `entity_descriptor` where given, and the explicit `issuer`, `sso`
and `cert` fill (or override) what it lacks, as Teleport reads them. pysaml2 wants IdP metadata, so
the IdP is always handed to it as one metadata document built here from those values: whatever the
descriptor said beyond them (other endpoints, other keys) is never trusted.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field, replace
from typing import Any

from bot.auth.connectors import display_of, is_ready, secret_of
from bot.auth.directory.groups import GroupsProvider, groups_provider
from bot.auth.errors import SignInError
from bot.auth.roles import RoleMapping, mappings_from
from bot.connectors.descriptor import parse_descriptor
from bot.connectors.field_checks import ConnectorSecrets
from bot.connectors.values import FORCE_AUTHN_NO, FORCE_AUTHN_YES

HTTP_POST = "http-post"
HTTP_REDIRECT = "http-redirect"


@dataclass(frozen=True)
class KeyPair:
    cert_pem: str
    key_pem: str = field(repr=False)


@dataclass(frozen=True)
class SamlSettings:
    name: str
    display: str
    acs: str
    sp_issuer: str
    audience: str
    idp_issuer: str
    sso: str
    idp_certs: tuple[str, ...]  # PEM
    force_authn: bool
    include_subject: bool = False
    binding: str = HTTP_REDIRECT
    allow_idp_initiated: bool = False
    signing: KeyPair | None = None
    assertion: KeyPair | None = None
    attributes_to_roles: tuple[RoleMapping, ...] = ()
    single_logout_url: str = ""
    allowed_https_hostnames: tuple[str, ...] = ()
    insecure_allowed_cidr_ranges: tuple[str, ...] = ()
    groups: GroupsProvider | None = GroupsProvider()  # Entra ID's group overage lookups (None: off)
    oauth_client_id: str | None = None  # `credentials.oauth.client_id`: whom the lookups authenticate as

    def idp_metadata(self) -> str:
        """The IdP as a metadata document of exactly the trusted values (issuer, SSO, certificates)."""
        keys = "".join(
            '<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>'
            f"{pem_body(pem)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>"
            for pem in self.idp_certs)
        sso = html.escape(self.sso, quote=True)
        services = "".join(
            f'<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:{b}" Location="{sso}"/>'
            for b in ("HTTP-Redirect", "HTTP-POST"))
        slo = ""
        if self.single_logout_url:
            location = html.escape(self.single_logout_url, quote=True)
            slo = ('<md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" '
                   f'Location="{location}"/>')
        return ('<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
                f'xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="{html.escape(self.idp_issuer, quote=True)}">'
                '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" '
                f'WantAuthnRequestsSigned="{"true" if self.signing else "false"}">'
                f"{keys}{slo}{services}</md:IDPSSODescriptor></md:EntityDescriptor>")


def saml_settings(doc: dict[str, Any], secrets: ConnectorSecrets) -> SamlSettings:
    """The login settings of a stored, reconciled SAML connector; SignInError when unusable."""
    name = doc["metadata"]["name"]
    if not is_ready(doc):
        raise SignInError("connector", f"connector `{name}` is not ready (its SuccessfullyReconciled condition "
                                       "is not True); fix what its status says", status=400)
    spec = doc.get("spec") or {}
    issuer, sso, certs = _identity_provider(name, spec)
    sp_issuer = str(spec.get("service_provider_issuer") or spec.get("audience") or spec["acs"])
    redirect = spec.get("client_redirect_settings") or {}
    return SamlSettings(
        name=name, display=display_of(doc), acs=spec["acs"], sp_issuer=sp_issuer,
        audience=str(spec.get("audience") or sp_issuer), idp_issuer=issuer, sso=sso, idp_certs=certs,
        force_authn=force_authn_of(spec.get("force_authn"), default=False),
        include_subject=spec.get("include_subject") is True,
        binding=HTTP_POST if spec.get("preferred_request_binding") == HTTP_POST else HTTP_REDIRECT,
        allow_idp_initiated=spec.get("allow_idp_initiated") is True,
        signing=_key_pair(doc, "signing_key_pair", secrets),
        assertion=_key_pair(doc, "assertion_key_pair", secrets),
        attributes_to_roles=tuple(mappings_from(spec.get("attributes_to_roles"), key="name")),
        single_logout_url=str(spec.get("single_logout_url") or ""),
        allowed_https_hostnames=tuple(redirect.get("allowed_https_hostnames") or ()),
        insecure_allowed_cidr_ranges=tuple(redirect.get("insecure_allowed_cidr_ranges") or ()),
        groups=groups_provider(spec),
        oauth_client_id=_oauth_client_id(spec),
    )


def _oauth_client_id(spec: dict[str, Any]) -> str | None:
    value = ((spec.get("credentials") or {}).get("oauth") or {}).get("client_id")
    return value if isinstance(value, str) and value else None


def saml_mfa_settings(doc: dict[str, Any], secrets: ConnectorSecrets) -> SamlSettings:
    """An MFA round's settings: the `mfa` IdP (descriptor, cert, issuer, sso) in place of the login's,
    and `force_authn` yes unless `mfa.force_authn` says no (RFD 180: the user proves it again, now)."""
    login = saml_settings(doc, secrets)
    mfa = (doc.get("spec") or {}).get("mfa") or {}
    if mfa.get("enabled") is not True:
        raise SignInError("mfa", f"connector `{login.name}` does not offer MFA checks (set mfa.enabled)", status=400)
    issuer, sso, certs = _identity_provider(login.name, mfa, fallback=login)
    return replace(login, idp_issuer=issuer, sso=sso, idp_certs=certs,
                   force_authn=force_authn_of(mfa.get("force_authn"), default=True))


def force_authn_of(value: Any, *, default: bool) -> bool:
    """0 / "" / absent: the default; 1 / true / yes…: yes; 2 / false / no…: no."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {1: True, 2: False}.get(value, default)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in FORCE_AUTHN_YES:
            return True
        if word in FORCE_AUTHN_NO:
            return False
    return default


def _identity_provider(name: str, spec: dict[str, Any],
                       fallback: SamlSettings | None = None) -> tuple[str, str, tuple[str, ...]]:
    issuer, sso, certs = "", "", []
    text = spec.get("entity_descriptor")
    if isinstance(text, str) and text.strip():
        parsed = parse_descriptor(text)
        if not isinstance(parsed, str):
            issuer, sso = parsed.entity_id, parsed.sso_url
            certs = [_der_to_pem(der) for der in parsed.signing_certificates]
    issuer = str(spec.get("issuer") or issuer)
    sso = str(spec.get("sso") or sso)
    if isinstance(spec.get("cert"), str) and spec["cert"].strip():
        certs = [spec["cert"]]
    if fallback is not None:
        issuer, sso = issuer or fallback.idp_issuer, sso or fallback.sso
        certs = certs or list(fallback.idp_certs)
    if not (issuer and sso and certs):
        raise SignInError("connector", f"connector `{name}` names no usable identity provider (issuer, SSO URL and "
                                       "signing certificate): set `entity_descriptor_url` or `entity_descriptor`, or "
                                       "`issuer`, `sso` and `cert`", status=400)
    return issuer, sso, tuple(certs)


def _key_pair(doc: dict[str, Any], field_name: str, secrets: ConnectorSecrets) -> KeyPair | None:
    pair = (doc.get("spec") or {}).get(field_name)
    if not isinstance(pair, dict):
        return None
    key = secret_of(doc, f"/spec/{field_name}/private_key", secrets, f"{field_name} private key")
    if key is None or not isinstance(pair.get("cert"), str):
        raise SignInError("connector", f"connector `{doc['metadata']['name']}`'s {field_name} cannot be read",
                          status=500)
    return KeyPair(pair["cert"], key)


def pem_body(pem: str) -> str:
    return "".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))


def _der_to_pem(der: bytes) -> str:
    body = base64.b64encode(der).decode()
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN CERTIFICATE-----\n{lines}\n-----END CERTIFICATE-----\n"


