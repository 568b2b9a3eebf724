"""SAML 2.0 sign-in through pysaml2 (the protocol, XML signatures and encryption run by it and the
`xmlsec1` binary — never by hand), with docs/connectors.md's checks repeated here on the verified assertion.

pysaml2 reads keys from files: the connector's keys are written once into a private directory of
this process (mode 0700, files 0600), named by their hash, and never logged.

What is read from a response is only what pysaml2 verified: `response.assertion` is the assertion
whose signature (or whose enclosing Response's signature) it checked, decrypted when encrypted.
A document with an XML comment anywhere is refused before parsing: a signed NameID split by a
comment reads differently in a canonicalising verifier than in a parser (the 2018 comment attacks).

pysaml2's client, configuration and metadata (which load and check the SAML schemas as they are
imported: about a second) are imported at the first use of a SAML connector, not with the server:
a process that serves no SAML sign-in never loads them.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import hashlib
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from defusedxml import ElementTree as SafeTree
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT, time_util
from saml2.saml import NAMEID_FORMAT_UNSPECIFIED, NameID, Subject

from bot.auth.errors import SignInError
from bot.auth.saml.algorithms import DIGEST, SIGN, check_signature
from bot.auth.saml.settings import HTTP_POST, KeyPair, SamlSettings

if TYPE_CHECKING:
    from saml2.client import Saml2Client

SKEW_SECONDS = 120
REQUEST_SECONDS = 600  # a pending AuthnRequest lives 10 minutes, as an OIDC state does
MAX_RESPONSE = 256 * 1024  # characters of a posted SAMLResponse
PROTOCOL = "{urn:oasis:names:tc:SAML:2.0:protocol}"
_BINDINGS = {HTTP_POST: BINDING_HTTP_POST}


@dataclass(frozen=True)
class Started:
    request_id: str
    method: str  # "GET": redirect to `url`; "POST": an auto-submitting form of `fields` to `url`
    url: str
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Identity:
    username: str
    attributes: dict[str, list[str]]
    assertion_id: str
    assertion_expires: float
    in_response_to: str | None
    session_index: str | None


class _KeyFiles:
    """The connector keys as files for xmlsec1, in one private directory per process."""

    def __init__(self) -> None:
        self._dir: str | None = None
        self._lock = threading.Lock()

    def path(self, text: str, suffix: str) -> str:
        with self._lock:
            if self._dir is None:
                self._dir = tempfile.mkdtemp(prefix="reviewer-saml-")
            name = os.path.join(self._dir, hashlib.sha256(text.encode()).hexdigest()[:32] + suffix)
            if not os.path.exists(name):
                descriptor = os.open(name + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(name + ".tmp", name)
            return name

    def remove(self) -> None:
        with self._lock:
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None


KEY_FILES = _KeyFiles()


def _pair_files(pair: KeyPair) -> dict[str, str]:
    return {"key_file": KEY_FILES.path(pair.key_pem, ".key"), "cert_file": KEY_FILES.path(pair.cert_pem, ".crt")}


def client_for(settings: SamlSettings) -> Saml2Client:
    """A pysaml2 SP for this connector, trusting exactly its IdP (issuer, certificates)."""
    from saml2.client import Saml2Client  # at the first SAML use (the module's doc)
    from saml2.config import SPConfig

    config: dict[str, Any] = {
        "entityid": settings.sp_issuer,
        "metadata": {"inline": [settings.idp_metadata()]},
        "accepted_time_diff": SKEW_SECONDS,
        "allow_unknown_attributes": True,
        "service": {"sp": {
            "endpoints": {"assertion_consumer_service": [(settings.acs, BINDING_HTTP_POST)]},
            "allow_unsolicited": settings.allow_idp_initiated,
            "authn_requests_signed": settings.signing is not None,
            "logout_requests_signed": settings.signing is not None,
            "want_response_signed": False,
            "want_assertions_signed": False,
            "want_assertions_or_response_signed": True,
            "name_id_format_allow_create": False,
        }},
    }
    slo = _slo_endpoint(settings)
    if slo:
        config["service"]["sp"]["endpoints"]["single_logout_service"] = [(slo, BINDING_HTTP_REDIRECT)]
    if settings.signing is not None:
        config.update(_pair_files(settings.signing))
    encryption = settings.assertion or settings.signing
    if encryption is not None:
        config["encryption_keypairs"] = [_pair_files(encryption)]
    sp_config = SPConfig()
    sp_config.load(config)
    client = Saml2Client(config=sp_config)
    # What we sign (AuthnRequests, logout messages) uses RSA-SHA256 and SHA-256 digests. pysaml2's
    # default is RSA-SHA1, and 7.5 reads the config's `signing_algorithm` under the SP's context,
    # where it is never set (IdentityPython/pysaml2#974): the entity's own attributes are what its
    # signing reads.
    client.signing_algorithm, client.digest_algorithm = SIGN, DIGEST
    return client


def _slo_endpoint(settings: SamlSettings) -> str | None:
    """Our SLO URL beside the `acs`, when the connector does single logout."""
    base, found, _ = settings.acs.rpartition("/v1/webapi/saml/acs")
    return f"{base}/v1/webapi/saml/slo/{settings.name}" if found and settings.single_logout_url else None


def begin(settings: SamlSettings, relay_state: str, subject: str | None = None) -> Started:
    """The AuthnRequest: Issuer, ACS URL, ForceAuthn, optional Subject, signed when a key is set."""
    client = client_for(settings)
    binding = _BINDINGS.get(settings.binding, BINDING_HTTP_REDIRECT)
    extra: dict[str, Any] = {"assertion_consumer_service_url": settings.acs}
    if settings.force_authn:
        extra["force_authn"] = "true"
    if settings.include_subject and subject:
        extra["subject"] = Subject(name_id=NameID(text=subject, format=NAMEID_FORMAT_UNSPECIFIED))
    sign_enveloped = settings.signing is not None and binding == BINDING_HTTP_POST
    request_id, request = client.create_authn_request(settings.sso, binding=BINDING_HTTP_POST,
                                                      sign=sign_enveloped, **extra)
    info = client.apply_binding(binding, str(request), settings.sso, relay_state=relay_state,
                                sign=settings.signing is not None and binding == BINDING_HTTP_REDIRECT)
    if binding == BINDING_HTTP_POST:
        encoded = base64.b64encode(str(request).encode()).decode()
        return Started(request_id, "POST", settings.sso, {"SAMLRequest": encoded, "RelayState": relay_state})
    location = dict(info["headers"])["Location"]
    return Started(request_id, "GET", location)


def metadata(settings: SamlSettings) -> str:
    """The SP metadata the IdP administrator loads: entity id, ACS (HTTP-POST), our certificates."""
    from saml2.metadata import create_metadata_string  # at the first SAML use (the module's doc)

    text = create_metadata_string(None, config=client_for(settings).config, valid=None, sign=False)
    return text.decode() if isinstance(text, bytes) else str(text)


def decode_response(posted: str) -> bytes:
    """The posted SAMLResponse's XML; SignInError when it is not one."""
    if not posted or len(posted) > MAX_RESPONSE:
        raise SignInError("saml-response", "the request carries no usable SAMLResponse", status=400)
    try:
        return base64.b64decode(posted, validate=False)
    except (binascii.Error, ValueError):
        raise SignInError("saml-response", "the SAMLResponse is not base64", status=400) from None


def in_response_to(xml: bytes) -> str | None:
    """The Response's InResponseTo, read before verification only to find the pending request."""
    value = _root(xml).get("InResponseTo")
    return value.strip() if value else None


def _root(xml: bytes) -> Any:
    """The samlp:Response element, parsed without DTDs or entities; comments refused outright."""
    if b"<!--" in xml:
        raise SignInError("xml-comment", "the SAML response carries an XML comment; a signed value split by a "
                                         "comment can read as another value, so such responses are refused")
    try:
        root = SafeTree.fromstring(xml)
    except Exception:  # defusedxml's and expat's many refusals: all mean "not a usable document"
        raise SignInError("saml-response", "the SAMLResponse is not a well-formed XML document without DTDs or "
                                           "entities", status=400) from None
    if root.tag != f"{PROTOCOL}Response":
        raise SignInError("saml-response", "the SAMLResponse is not a samlp:Response", status=400)
    return root


def verify(settings: SamlSettings, xml: bytes, request_id: str | None, now: float | None = None) -> Identity:
    """pysaml2's verification (signature by the IdP's certificate, decryption, InResponseTo against
    the one pending request), then every check of docs/connectors.md again on what it verified."""
    destination = _root(xml).get("Destination")
    if destination is not None and destination != settings.acs:  # refusing early is safe; accepting waits
        raise SignInError("saml-destination", "the Response's Destination is not this connector's acs")
    client = client_for(settings)
    outstanding = {request_id: settings.acs} if request_id else {}
    encoded = base64.b64encode(xml).decode()
    try:
        response = client.parse_authn_request_response(encoded, BINDING_HTTP_POST, outstanding=outstanding)
    except Exception as exc:  # pysaml2 signals each refusal by its own exception class
        check, reason = refusal_of(exc)
        raise SignInError(check, f"the SAML response was refused: {reason}") from None
    if response is None or response.assertion is None:
        raise SignInError("saml-verify", "the SAML response carries no verifiable assertion")
    return _checked(settings, response, request_id, time.time() if now is None else now)


_BY_CLASS = {
    "SignatureError": ("saml-signature", "no valid signature by the identity provider's certificate on the "
                                         "Response or the Assertion"),
    "IncorrectlySigned": ("saml-signature", "no valid signature by the identity provider's certificate"),
    "SigverError": ("saml-signature", "no valid signature by the identity provider's certificate"),
    "InvalidAssertion": ("saml-assertion", "a Response must carry exactly one assertion, signed"),
    "MissingKey": ("saml-signature", "no certificate of the identity provider to check its signature with"),
    "UnsolicitedResponse": ("saml-in-response-to", "it answers no pending request of this connector"),
    "ResponseLifetimeExceed": ("saml-time", "it has expired (2 minutes of skew)"),
    "ToEarly": ("saml-time", "it is not valid yet (2 minutes of skew)"),
    "DecryptError": ("saml-decrypt", "the encrypted assertion cannot be decrypted with assertion_key_pair"),
    "DecryptionFailed": ("saml-decrypt", "the encrypted assertion cannot be decrypted with assertion_key_pair"),
}
_BY_MESSAGE = (  # pysaml2's fixed messages for refusals it raises with a generic class
    ("AudienceRestrictions", "saml-audience", "its Audience is not this connector's audience"),
    ("Condition not OK", "saml-time", "its Conditions do not hold now (validity period, 2 minutes of skew)"),
    ("No valid recipient", "saml-recipient", "its SubjectConfirmation's Recipient is not this connector's acs"),
    ("Signature missing", "saml-signature", "neither the Response nor the Assertion is signed"),
)


def refusal_of(exc: Exception) -> tuple[str, str]:
    """The check a pysaml2 refusal stands for, and why, in words safe to show (never its XML)."""
    name = exc.__class__.__name__
    if name in _BY_CLASS:
        return _BY_CLASS[name]
    text = str(exc)
    for needle, check, reason in _BY_MESSAGE:
        if needle in text:
            return check, reason
    if name.startswith("Status"):
        return "saml-status", f"the identity provider answered with an error status ({name})"
    return "saml-verify", f"its verification failed ({name})"


def _checked(settings: SamlSettings, response: Any, request_id: str | None, now: float) -> Identity:
    outer, assertion = response.response, response.assertion
    if outer.signature is None and assertion.signature is None:
        raise SignInError("saml-signature", "neither the Response nor the Assertion is signed")
    check_signature(outer.signature, "Response")
    check_signature(assertion.signature, "Assertion")
    if outer.destination is not None and outer.destination != settings.acs:
        raise SignInError("saml-destination", "the Response's Destination is not this connector's acs")
    _issuer(outer.issuer, settings, "Response", optional=True)
    _issuer(assertion.issuer, settings, "Assertion", optional=False)
    if (outer.in_response_to or None) != request_id:
        raise SignInError("saml-in-response-to", "InResponseTo does not name this sign-in's pending request")
    _conditions(settings, assertion.conditions, now)
    _confirmation(settings, assertion.subject, request_id, now)
    if settings.force_authn and request_id is not None:
        _authenticated_now(assertion.authn_statement, now)
    name_id = assertion.subject.name_id if assertion.subject is not None else None
    username = (name_id.text or "").strip() if name_id is not None else ""
    if not username:
        raise SignInError("saml-name-id", "the assertion carries no NameID: the username is the NameID")
    attributes: dict[str, list[str]] = {}
    for statement in assertion.attribute_statement or []:
        for attribute in statement.attribute or []:
            values = [(v.text or "").strip() for v in attribute.attribute_value or [] if v.text]
            attributes.setdefault(attribute.name, []).extend(values)
    index = next((s.session_index for s in assertion.authn_statement or [] if s.session_index), None)
    expires = _expiry(assertion.conditions, assertion.subject) or now + REQUEST_SECONDS
    return Identity(username, attributes, assertion.id, expires, request_id, index)


def _issuer(issuer: Any, settings: SamlSettings, where: str, *, optional: bool) -> None:
    if issuer is None and optional:
        return
    if issuer is None or (issuer.text or "").strip() != settings.idp_issuer:
        raise SignInError("saml-issuer", f"the {where}'s Issuer is not the connector's identity provider")


def _conditions(settings: SamlSettings, conditions: Any, now: float) -> None:
    if conditions is None:
        raise SignInError("saml-conditions", "the assertion has no Conditions (validity period and audience)")
    _window(conditions.not_before, conditions.not_on_or_after, now)
    audiences = [(a.text or "").strip() for r in conditions.audience_restriction or [] for a in r.audience or []]
    if settings.audience not in audiences:
        raise SignInError("saml-audience", "the assertion's Audience is not this connector's audience")


def _confirmation(settings: SamlSettings, subject: Any, request_id: str | None, now: float) -> None:
    confirmations = [c for c in (subject.subject_confirmation if subject is not None else []) or []
                     if c.method == "urn:oasis:names:tc:SAML:2.0:cm:bearer"]
    if not confirmations:
        raise SignInError("saml-recipient", "the assertion has no bearer SubjectConfirmation")
    for confirmation in confirmations:
        data = confirmation.subject_confirmation_data
        if data is None or data.recipient != settings.acs:
            raise SignInError("saml-recipient", "the SubjectConfirmation's Recipient is not this connector's acs")
        if (data.in_response_to or None) != request_id:
            raise SignInError("saml-in-response-to", "the SubjectConfirmation's InResponseTo is not this sign-in's "
                                                     "request")
        _window(data.not_before, data.not_on_or_after, now)


def _authenticated_now(statements: Any, now: float) -> None:
    """Our request asked ForceAuthn (an MFA round, unless `mfa.force_authn` says no): the IdP must
    have authenticated the user just now, as OIDC's `auth_time` must be within `max_age` (0 for an
    MFA round) — the newest AuthnInstant within 2 minutes of skew. An IdP that ignores ForceAuthn
    and answers from its session would otherwise pass an MFA check the user never took."""
    instants = [s.authn_instant for s in statements or [] if s.authn_instant]
    if not instants:
        raise SignInError("saml-authn-instant", "the request asked ForceAuthn, but the assertion has no "
                                                "AuthnStatement with an AuthnInstant")
    if now - max(_epoch(instant) for instant in instants) > SKEW_SECONDS:
        raise SignInError("saml-authn-instant", "the request asked ForceAuthn, but the assertion's AuthnInstant is "
                                                "more than 2 minutes old: the identity provider did not authenticate "
                                                "the user again (make it honour ForceAuthn; check the clocks)")


def _window(not_before: str | None, not_on_or_after: str | None, now: float) -> None:
    if not_before and now + SKEW_SECONDS < _epoch(not_before):
        raise SignInError("saml-time", "the assertion is not valid yet (NotBefore, 2 minutes of skew)")
    if not_on_or_after and now - SKEW_SECONDS >= _epoch(not_on_or_after):
        raise SignInError("saml-time", "the assertion has expired (NotOnOrAfter, 2 minutes of skew)")


def _expiry(conditions: Any, subject: Any) -> float | None:
    times = [conditions.not_on_or_after] if conditions is not None and conditions.not_on_or_after else []
    for confirmation in (subject.subject_confirmation if subject is not None else []) or []:
        data = confirmation.subject_confirmation_data
        if data is not None and data.not_on_or_after:
            times.append(data.not_on_or_after)
    return max((_epoch(t) for t in times), default=None)


def _epoch(value: str) -> float:
    try:
        return float(calendar.timegm(time_util.str_to_time(value)))
    except (ValueError, TypeError):
        raise SignInError("saml-time", "the assertion carries an unreadable time") from None
