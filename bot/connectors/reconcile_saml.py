"""The meaning of a SAML connector (v2) beyond its structure: where the IdP is and whom to trust."""

from __future__ import annotations

from typing import Any

from bot.connectors import field_checks as checks
from bot.connectors.descriptor import Descriptor, parse_descriptor
from bot.connectors.descriptor_fetch import Fetched
from bot.connectors.field_checks import ConnectorSecrets, present, require
from bot.connectors.pem import key_matches_certificate, load_certificate, load_der_certificate, load_private_key
from bot.connectors.problem import Problem, problem
from bot.documents.pointers import get_at


def reconcile_saml(doc: dict, secrets: ConnectorSecrets, fetched: dict[str, Fetched] | None = None) -> list[Problem]:
    """Every problem of a structurally valid SAML connector document; `fetched` holds the
    descriptors fetched from `entity_descriptor_url` (by IdP pointer), checked as inline ones."""
    fetched = fetched or {}
    found = _acs(doc)
    found += _identity_provider(doc, "/spec", login=True, fetched=fetched.get("/spec"))
    found += checks.check_role_mappings(doc, "/spec/attributes_to_roles", "name", "attribute")
    found += _key_pair(doc, "/spec/signing_key_pair", secrets, "sign authentication requests")
    found += _key_pair(doc, "/spec/assertion_key_pair", secrets, "decrypt assertions")
    found += checks.check_url(get_at(doc, "/spec/single_logout_url"), "/spec/single_logout_url")
    found += _mfa(doc, fetched.get("/spec/mfa"))
    found += _credentials(doc, secrets)
    return found + checks.common(doc)


def _acs(doc: dict) -> list[Problem]:
    found = require(doc, "/spec/acs", "set the assertion consumer service URL, such as "
                    "`https://reviewer.example.com/v1/webapi/saml/acs/<connector name>`")
    acs = get_at(doc, "/spec/acs")
    found += checks.check_url(acs, "/spec/acs")
    name = get_at(doc, "/metadata/name")
    if (get_at(doc, "/spec/allow_idp_initiated") is True and isinstance(acs, str) and acs
            and isinstance(name, str) and not acs.rstrip("/").endswith(f"/{name}")):
        found.append(problem("/spec/acs", "pattern",
                             f"must end with `/{name}` (the connector's name) when `spec.allow_idp_initiated` "
                             "is true, so that an IdP-initiated login finds its connector"))
    return found


def _identity_provider(doc: dict, base: str, *, login: bool, fetched: Fetched | None = None) -> list[Problem]:
    """Descriptor, descriptor URL, or issuer + sso: the same rule for login and for MFA checks.

    As in Teleport, the explicit `issuer`, `sso` and `cert` fill what a descriptor lacks; only
    what neither supplies is reported, as a missing field. A descriptor fetched from its URL
    goes through the same checks as an inline one.
    """
    found: list[Problem] = []
    descriptor: Descriptor | None = None
    text = get_at(doc, f"{base}/entity_descriptor")
    if isinstance(text, str) and present(text):
        parsed = parse_descriptor(text)
        if isinstance(parsed, str):
            found.append(problem(f"{base}/entity_descriptor", "invalid-xml", parsed))
        else:
            descriptor = parsed
            found += _descriptor_contents(parsed, f"{base}/entity_descriptor")
    url = get_at(doc, f"{base}/entity_descriptor_url")
    found += checks.check_url(url, f"{base}/entity_descriptor_url")
    sso = get_at(doc, f"{base}/sso")
    found += checks.check_url(sso, f"{base}/sso")
    cert = get_at(doc, f"{base}/cert")
    if isinstance(cert, str) and present(cert):
        found += _certificate(cert, f"{base}/cert")
    enabled = login or get_at(doc, f"{base}/enabled") is True
    if enabled and fetched is not None and descriptor is None and not present(text):
        return found + _fetched_descriptor(doc, base, fetched, login=login)
    if not enabled or present(url) or (present(text) and descriptor is None):
        return found  # not checked offline, or a broken descriptor already reported once
    if descriptor is not None:
        return found + _descriptor_gaps(doc, base, descriptor, login=login)
    if not (present(get_at(doc, f"{base}/issuer")) and present(sso)):
        found.append(problem(base, "required",
                             "needs the identity provider: set `entity_descriptor_url` (or `entity_descriptor`), "
                             "or both `issuer` and `sso`"))
    elif login and not present(cert):
        found.append(problem(base, "required",
                             "needs `cert`: the identity provider's signing certificate (PEM), or a "
                             "descriptor that carries it"))
    return found


def _fetched_descriptor(doc: dict, base: str, fetched: Fetched, *, login: bool) -> list[Problem]:
    """The document behind `entity_descriptor_url`: unreachable, unreadable, or checked as inline."""
    pointer, url = f"{base}/entity_descriptor_url", fetched.url[:200]
    if fetched.text is None:
        return [problem(pointer, "fetch-failed", f"cannot be fetched: {url} — {fetched.error}; make the URL serve "
                                                "the identity provider's SAML metadata, or set `entity_descriptor`")]
    parsed = parse_descriptor(fetched.text)
    if isinstance(parsed, str):
        return [problem(pointer, "invalid-xml", f"names a document ({url}) that {parsed}; serve the identity "
                                                "provider's SAML metadata there, or set `entity_descriptor`")]
    return _descriptor_contents(parsed, pointer) + _descriptor_gaps(doc, base, parsed, login=login,
                                                                     source=f"the entity descriptor at {url}")


def _descriptor_gaps(doc: dict, base: str, descriptor: Descriptor, *, login: bool,
                     source: str = "the entity descriptor") -> list[Problem]:
    """`issuer`, `sso` and (for login) `cert` that neither the descriptor nor the fields supply."""
    idp = "" if descriptor.has_idp else " (it has no IDPSSODescriptor)"
    gaps = [
        ("issuer", bool(descriptor.entity_id), f"{source} has no entityID: set the IdP's issuer"),
        ("sso", bool(descriptor.sso_url), f"{source}{idp} has no SingleSignOnService with an "
                                          "HTTP-Redirect or HTTP-POST Location: set the IdP's SSO URL (https)"),
    ]
    if login:
        gaps.append(("cert", bool(descriptor.signing_certificates),
                     f"{source}{idp} carries no signing certificate: set the IdP's certificate (PEM)"))
    return [problem(base, "required", f"needs `{name}`: {why}")
            for name, supplied, why in gaps if not supplied and not present(get_at(doc, f"{base}/{name}"))]


def _descriptor_contents(descriptor: Descriptor, pointer: str) -> list[Problem]:
    found = checks.check_url(descriptor.sso_url, pointer) if descriptor.sso_url else []
    if found:  # reword: the URL is inside the descriptor
        what = "an https:// URL" if found[0].code == "not-https" else "a valid absolute URL"
        found = [problem(pointer, found[0].code, f"has a SingleSignOnService Location that is not {what}")]
    for index, der in enumerate(descriptor.signing_certificates):
        loaded = load_der_certificate(der)
        if isinstance(loaded, str):
            found.append(problem(pointer, "invalid-pem", f"has signing certificate {index + 1} that {loaded}"))
    return found


def _certificate(text: str, pointer: str) -> list[Problem]:
    loaded = load_certificate(text)
    return [problem(pointer, "invalid-pem", loaded)] if isinstance(loaded, str) else []


def _key_pair(doc: dict, base: str, secrets: ConnectorSecrets, purpose: str) -> list[Problem]:
    pair = get_at(doc, base)
    if not isinstance(pair, dict):
        return []
    found = require(doc, f"{base}/cert", f"the certificate (PEM) of the key pair used to {purpose}")
    found += require(doc, f"{base}/private_key", f"the private key (PEM, or a `secret://NAME/KEY` reference) "
                     f"used to {purpose}")
    key_text, lookup = checks.resolve_secret(doc, f"{base}/private_key", secrets)
    found += lookup
    cert = _loaded(pair.get("cert"), load_certificate, f"{base}/cert", found)
    key = _loaded(key_text, load_private_key, f"{base}/private_key", found)
    if cert is not None and key is not None and not key_matches_certificate(key, cert):
        found.append(problem(f"{base}/private_key", "key-mismatch",
                             "does not belong to `cert`: the certificate's public key is another key's; "
                             "put the private key issued with this certificate"))
    return found


def _loaded(text: Any, loader, pointer: str, found: list[Problem]) -> Any:
    if not isinstance(text, str) or not present(text):
        return None
    loaded = loader(text)
    if isinstance(loaded, str):
        found.append(problem(pointer, "invalid-pem", loaded))
        return None
    return loaded


def _mfa(doc: dict, fetched: Fetched | None) -> list[Problem]:
    if not isinstance(get_at(doc, "/spec/mfa"), dict):
        return []
    return _identity_provider(doc, "/spec/mfa", login=False, fetched=fetched)


def _credentials(doc: dict, secrets: ConnectorSecrets) -> list[Problem]:
    if not isinstance(get_at(doc, "/spec/credentials/oauth"), dict):
        return []
    found = require(doc, "/spec/credentials/oauth/client_id",
                    "the OAuth client (client-credentials grant) the connector calls the directory with")
    return found + checks.resolve_secret(doc, "/spec/credentials/oauth/client_secret", secrets)[1]
