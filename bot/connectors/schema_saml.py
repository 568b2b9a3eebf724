"""The SAML connector (kind ServiceSAMLConnector, v2): seed.md 2.4 and docs/connectors.md, as shapes."""

from __future__ import annotations

from bot.connectors.kinds import SAML
from bot.connectors.schema_common import (
    CLIENT_REDIRECT_SETTINGS,
    FORCE_AUTHN,
    envelope,
    groups_provider,
    role_mappings,
    strings,
    text,
)
from bot.shapes import Bool, Obj, Str


def key_pair(purpose: str) -> Obj:
    return Obj(
        description=f"x509 key pair used to {purpose}.",
        properties={
            "cert": text("PEM x509 certificate."),
            "private_key": text("PEM private key, or a `secret://NAME/KEY` reference (never shown back)."),
        },
    )


MFA = Obj(
    description="SSO MFA checks through this connector.",
    properties={
        "enabled": Bool(description="Whether the connector supports MFA checks (default false)."),
        "cert": text("IdP certificate (PEM) used to verify signed responses."),
        "entity_descriptor": text("IdP metadata XML; usually set from the descriptor URL."),
        "entity_descriptor_url": text("https URL of the IdP metadata XML."),
        "force_authn": FORCE_AUTHN,
        "issuer": text("IdP issuer; usually taken from the descriptor."),
        "sso": text("IdP SSO URL (https); usually taken from the descriptor."),
    },
)

SPEC = Obj(
    description="SAML connector settings.",
    properties={
        "acs": text("Assertion consumer service URL on the service's side; ends with `/<name>` when "
                    "allow_idp_initiated is true."),
        "allow_idp_initiated": Bool(description="Whether the connector can be used for IdP-initiated logins."),
        "assertion_key_pair": key_pair("decrypt SAML assertions"),
        "attributes_to_roles": role_mappings("name", "attribute"),
        "audience": text("Uniquely identifies the service provider."),
        "cert": text("The IdP's signing certificate (PEM)."),
        "client_redirect_settings": CLIENT_REDIRECT_SETTINGS,
        "credentials": Obj(
            description="Credentials for ancillary calls to the IdP (such as a graph API).",
            properties={"oauth": Obj(
                description="OAuth client-credentials grant.",
                properties={"client_id": text("OAuth client id."),
                            "client_secret": text("OAuth client secret, or a `secret://NAME/KEY` reference.")},
            )},
        ),
        "display": text("How the connector is displayed."),
        "entity_descriptor": text("IdP metadata XML; supplies issuer, SSO URL and certificate in one document."),
        "entity_descriptor_url": text("https URL of the IdP metadata XML."),
        "directory_id_groups_provider": groups_provider(
            "the assertion carries `groups.link` instead of `groups` (more than 150 groups)"),
        "force_authn": FORCE_AUTHN,
        "include_subject": Bool(description="Include the Subject element in the authentication request "
                                            "(default false)."),
        "issuer": text("The IdP's issuer (entityID)."),
        "mfa": MFA,
        "preferred_request_binding": Str(enum=("", "http-post", "http-redirect"),
                                         description="http-redirect (default) or http-post."),
        "provider": text("The external identity provider (informational)."),
        "service_provider_issuer": text("Issuer (entityID) of the service provider, the service."),
        "signing_key_pair": key_pair("sign authentication requests"),
        "single_logout_url": text("SAML single log-out URL; absent disables single log-out."),
        "sso": text("URL (https) of the IdP's SSO service."),
        "user_matchers": strings("Glob patterns narrowing which usernames this connector matches."),
    },
)

SAML_CONNECTOR = envelope(SAML, SPEC, "A SAML connector (resources.service.dev/v2, kind ServiceSAMLConnector).")
