"""A stored OIDC connector, read as the settings one sign-in uses (pure).

Only a connector whose `SuccessfullyReconciled` condition is True signs anyone in: a connector the
server found invalid, or whose secret it could not look up, is listed nowhere and refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from bot.auth.directory.groups import GroupsProvider, groups_provider
from bot.auth.errors import SignInError, UnknownConnector
from bot.auth.patterns import matches_any
from bot.auth.roles import RoleMapping, mappings_from
from bot.connectors.conditions import SUCCESSFULLY_RECONCILED
from bot.connectors.field_checks import ConnectorSecrets, resolve_secret
from bot.connectors.kinds import NAME_RULE, is_connector_name
from bot.connectors.problem import VALIDATION_FAILED
from bot.connectors.values import NANOS_PER_SECOND, parse_duration
from bot.documents.pointers import human_pointer
from bot.store.model import ConnectorStore

BASE_SCOPES = ("openid", "email")


@dataclass(frozen=True)
class OidcSettings:
    name: str
    display: str
    issuer: str
    client_id: str
    client_secret: str = field(repr=False)
    redirect_urls: tuple[str, ...]
    scopes: tuple[str, ...] = BASE_SCOPES
    prompt: str | None = "select_account"  # None: omitted
    max_age: int | None = None  # seconds; None: not sent (a login's 0 is "not set"; an MFA round's 0 re-asks)
    acr_values: tuple[str, ...] = ()
    pkce: bool = True
    signed_request: bool = False
    claims_to_roles: tuple[RoleMapping, ...] = ()
    username_claim: str = "email"
    allow_unverified_email: bool = False
    allowed_https_hostnames: tuple[str, ...] = ()
    insecure_allowed_cidr_ranges: tuple[str, ...] = ()
    groups: GroupsProvider | None = GroupsProvider()  # Entra ID's group overage lookups (None: off)


def is_ready(doc: dict[str, Any]) -> bool:
    conditions = (doc.get("status") or {}).get("conditions") or []
    return any(c.get("type") == SUCCESSFULLY_RECONCILED and c.get("status") == "True" for c in conditions)


async def connector_doc(store: ConnectorStore, kind: str, label: str, name: Any) -> dict[str, Any]:
    """The stored connector of `kind` a sign-in names (`label`: "OIDC" or "SAML", for the refusals)."""
    if not isinstance(name, str) or not name:
        raise UnknownConnector("connector", f"connector_id is required: the name of {_article(label)} {label} "
                               "connector", status=400)
    if not is_connector_name(name):
        raise UnknownConnector("connector", f"connector_id must be {NAME_RULE}", status=400)
    doc = await store.get(kind, name)
    if doc is None:
        raise UnknownConnector("connector", f"there is no {label} connector named `{name[:100]}`", status=404)
    return doc


def _article(label: str) -> str:
    return "an" if label[:1] in "AEIOU" else "a"


def display_of(doc: dict[str, Any]) -> str:
    spec = doc.get("spec") or {}
    return str(spec.get("display") or doc["metadata"]["name"])


def user_matches(doc: dict[str, Any], username: str) -> bool:
    """`user_matchers` (none: everyone), as identifier-first login filters connectors: `*` globs or
    `^…$` regular expressions, each matching the whole username (`bot.auth.patterns`)."""
    matchers = (doc.get("spec") or {}).get("user_matchers") or []
    return not matchers or matches_any(matchers, username)


def secret_of(doc: dict[str, Any], pointer: str, secrets: ConnectorSecrets, what: str) -> str | None:
    """The secret at `pointer` for a sign-in (None when the field is absent). A reference the
    connector may not follow — another's secret, or one the admin file references, such as a model
    key — refuses the sign-in as `secret-reference`, naming the field, whatever the stored status
    says (the admin file may have changed since); one the store cannot answer, as `connector`."""
    value, problems = resolve_secret(doc, pointer, secrets)
    name = doc["metadata"]["name"]
    for found in problems:
        if found.reason == VALIDATION_FAILED:
            raise SignInError("secret-reference", f"connector `{name}` may not read its {human_pointer(pointer)}: a "
                                                  "connector reads only its own secret (`secret://<its name>/KEY`), "
                                                  "never the server's own or one the admin file references (a model "
                                                  "key, say); see the connector's status", status=400)
        raise SignInError("connector", f"connector `{name}`'s {what} cannot be read from the secret store",
                          status=500)
    return value


def oidc_settings(doc: dict[str, Any], secrets: ConnectorSecrets) -> OidcSettings:
    """The sign-in settings of a stored, reconciled OIDC connector; SignInError when unusable."""
    name = doc["metadata"]["name"]
    if not is_ready(doc):
        raise SignInError("connector", f"connector `{name}` is not ready (its SuccessfullyReconciled condition "
                                       "is not True); fix what its status says", status=400)
    spec = doc.get("spec") or {}
    secret = secret_of(doc, "/spec/client_secret", secrets, "client secret")
    if secret is None:
        raise SignInError("connector", f"connector `{name}` has no client secret", status=500)
    redirect = spec.get("client_redirect_settings") or {}
    prompt = spec.get("prompt")
    scopes = tuple(dict.fromkeys(BASE_SCOPES + tuple(spec.get("scope") or ())))
    return OidcSettings(
        name=name, display=display_of(doc), issuer=spec["issuer_url"], client_id=spec["client_id"],
        client_secret=secret, redirect_urls=tuple(spec["redirect_url"]), scopes=scopes,
        prompt="select_account" if prompt is None else (prompt or None),
        max_age=_seconds(spec.get("max_age")) or None, acr_values=tuple((spec.get("acr_values") or "").split()),
        pkce=spec.get("pkce_mode") != "disabled", signed_request=spec.get("request_object_mode") == "signed",
        claims_to_roles=tuple(mappings_from(spec.get("claims_to_roles"))),
        username_claim=spec.get("username_claim") or "email",
        allow_unverified_email=spec.get("allow_unverified_email") is True,
        allowed_https_hostnames=tuple(redirect.get("allowed_https_hostnames") or ()),
        insecure_allowed_cidr_ranges=tuple(redirect.get("insecure_allowed_cidr_ranges") or ()),
        groups=groups_provider(spec),
    )


def mfa_settings(doc: dict[str, Any], secrets: ConnectorSecrets) -> OidcSettings:
    """The settings of an MFA round through this connector: its `mfa` client, ACR, prompt and
    `max_age` (default 0: the provider must authenticate the user again, now) replace the login's
    (Teleport's RFD 180). Request objects follow `mfa.request_object_mode`, else the connector's."""
    login = oidc_settings(doc, secrets)
    mfa = (doc.get("spec") or {}).get("mfa") or {}
    if mfa.get("enabled") is not True:
        raise SignInError("mfa", f"connector `{login.name}` does not offer MFA checks (set mfa.enabled)", status=400)
    secret = secret_of(doc, "/spec/mfa/client_secret", secrets, "MFA client secret")
    if secret is None or not mfa.get("client_id"):
        raise SignInError("connector", f"connector `{login.name}`'s MFA client id or secret cannot be read",
                          status=500)
    prompt = mfa.get("prompt")
    mode = mfa.get("request_object_mode") or ""
    return replace(login, client_id=mfa["client_id"], client_secret=secret,
                   acr_values=tuple((mfa.get("acr_values") or "").split()),
                   prompt="select_account" if prompt is None else (prompt or None),
                   max_age=_seconds(mfa.get("max_age")),
                   signed_request=login.signed_request if mode == "" else mode == "signed")


def _seconds(value: Any) -> int:
    if value is None:
        return 0
    nanos = parse_duration(value)
    return max(0, int(nanos // NANOS_PER_SECOND)) if nanos is not None else 0
