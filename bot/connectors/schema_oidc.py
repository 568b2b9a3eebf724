"""The OIDC connector (kind ServiceOIDCConnector, v3): seed.md 2.3 and docs/connectors.md, as shapes."""

from __future__ import annotations

from bot.connectors.kinds import OIDC
from bot.connectors.schema_common import (
    CLIENT_REDIRECT_SETTINGS,
    DURATION,
    envelope,
    groups_provider,
    role_mappings,
    strings,
    text,
)
from bot.shapes import Bool, Obj, Str

REQUEST_OBJECT_MODES = ("", "none", "signed")

MFA = Obj(
    description="SSO MFA checks through this connector, with their own OAuth app.",
    properties={
        "enabled": Bool(description="Whether the connector supports MFA checks (default false)."),
        "client_id": text("Client id of the MFA OAuth app."),
        "client_secret": text("Client secret of the MFA OAuth app; a `secret://NAME/KEY` reference or the value "
                              "(never shown back)."),
        "acr_values": text("ACR values for MFA checks, such as a phishing-resistant context."),
        "max_age": DURATION,
        "prompt": text("OIDC prompt for MFA checks; empty omits it; default select_account."),
        "request_object_mode": Str(enum=REQUEST_OBJECT_MODES,
                                   description="Request objects for MFA; omitted uses the connector's, "
                                               "`none` disables them."),
    },
)

SPEC = Obj(
    description="OIDC connector settings.",
    properties={
        "acr_values": text("Authentication Context Class Reference value; its meaning depends on the provider."),
        "allow_unverified_email": Bool(description="Accept users whose email is unverified."),
        "claims_to_roles": role_mappings("claim", "claim"),
        "client_id": text("Id of the OAuth client registered with the provider."),
        "client_redirect_settings": CLIENT_REDIRECT_SETTINGS,
        "client_secret": text("Client secret: a `secret://NAME/KEY` reference, or the value (never shown back)."),
        "display": text("Friendly name of the provider shown on the login screen."),
        "directory_id_groups_provider": groups_provider(
            "the ID token carries a groups claim source instead of `groups` (more than 200 groups)"),
        "cloud_admin_email": Str(pattern=r"^[^@\s]+@[^@\s]+$", pattern_hint="an email address",
                                 description="Email of a cloud-directory (Google Workspace) administrator to "
                                             "impersonate."),
        "cloud_service_account": text("Service-account credentials (JSON) as a string, or a `secret://` reference."),
        "cloud_service_account_uri": text("Path or URI of a service-account file."),
        "issuer_url": text("The provider's issuer, an https URL (its discovery document's `issuer`)."),
        "max_age": DURATION,
        "mfa": MFA,
        "pkce_mode": Str(enum=("", "enabled", "disabled"), description="PKCE: enabled or disabled."),
        "prompt": text("OIDC prompt; empty omits it; default select_account."),
        "provider": text("The external identity provider (informational)."),
        "redirect_url": strings("Callback URLs the provider may redirect to; they must match the provider's."),
        "request_object_mode": Str(enum=REQUEST_OBJECT_MODES,
                                   description="How JWT-secured authorization requests are used."),
        "scope": strings("Additional scopes to request."),
        "user_matchers": strings("Glob patterns narrowing which usernames this connector matches."),
        "username_claim": text("Name of the claim used as the username."),
    },
)

OIDC_CONNECTOR = envelope(OIDC, SPEC, "An OIDC connector (resources.service.dev/v3, kind ServiceOIDCConnector).")
