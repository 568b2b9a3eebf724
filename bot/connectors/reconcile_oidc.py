"""The meaning of an OIDC connector (v3) beyond its structure: what it needs to sign anyone in."""

from __future__ import annotations

from bot.connectors import field_checks as checks
from bot.connectors.field_checks import ConnectorSecrets, present, require
from bot.connectors.problem import Problem, problem
from bot.documents.pointers import get_at


def reconcile_oidc(doc: dict, secrets: ConnectorSecrets) -> list[Problem]:
    """Every problem of a structurally valid OIDC connector document."""
    found = _client(doc, secrets)
    found += require(doc, "/spec/issuer_url", "set the provider's issuer (its discovery document's `issuer`)")
    found += checks.check_url(get_at(doc, "/spec/issuer_url"), "/spec/issuer_url")
    found += _redirect_urls(doc)
    found += checks.check_role_mappings(doc, "/spec/claims_to_roles", "claim", "claim")
    found += _service_account(doc, secrets)
    found += checks.check_duration(get_at(doc, "/spec/max_age"), "/spec/max_age")
    found += _mfa(doc, secrets)
    return found + checks.common(doc)


def _client(doc: dict, secrets: ConnectorSecrets) -> list[Problem]:
    found = require(doc, "/spec/client_id", "set the client id the provider issued for this application")
    found += require(doc, "/spec/client_secret",
                     "set the client secret, preferably as a `secret://NAME/KEY` reference")
    return found + checks.resolve_secret(doc, "/spec/client_secret", secrets)[1]


def _redirect_urls(doc: dict) -> list[Problem]:
    found = require(doc, "/spec/redirect_url",
                    "list the callback URL(s) registered with the provider, such as "
                    "`https://reviewer.example.com/v1/webapi/oidc/callback`")
    urls = get_at(doc, "/spec/redirect_url")
    for index, url in enumerate(urls if isinstance(urls, list) else []):
        if isinstance(url, str) and not url:
            found.append(problem(f"/spec/redirect_url/{index}", "required", "is empty: give an absolute URL"))
        found += checks.check_url(url, f"/spec/redirect_url/{index}")
    return found


def _service_account(doc: dict, secrets: ConnectorSecrets) -> list[Problem]:
    """Google Workspace group lookup: one source of credentials, and whom to impersonate."""
    inline = present(get_at(doc, "/spec/cloud_service_account"))
    uri = present(get_at(doc, "/spec/cloud_service_account_uri"))
    found: list[Problem] = []
    if inline and uri:
        found.append(problem("/spec/cloud_service_account_uri", "exclusive",
                             "cannot be set together with `spec.cloud_service_account`: keep one of them"))
    if (inline or uri) and not present(get_at(doc, "/spec/cloud_admin_email")):
        which = "cloud_service_account" if inline else "cloud_service_account_uri"
        found.append(problem(f"/spec/{which}", "requires",
                             "needs `spec.cloud_admin_email`: the email of a directory administrator "
                             "the service account impersonates"))
    found += checks.check_file_uri(get_at(doc, "/spec/cloud_service_account_uri"), "/spec/cloud_service_account_uri")
    return found + checks.resolve_secret(doc, "/spec/cloud_service_account", secrets)[1]


def _mfa(doc: dict, secrets: ConnectorSecrets) -> list[Problem]:
    mfa = get_at(doc, "/spec/mfa")
    if not isinstance(mfa, dict):
        return []
    found = checks.check_duration(mfa.get("max_age"), "/spec/mfa/max_age")
    found += checks.resolve_secret(doc, "/spec/mfa/client_secret", secrets)[1]
    if mfa.get("enabled") is True:
        found += require(doc, "/spec/mfa/client_id",
                         "MFA checks use their own OAuth app: set its client id")
        found += require(doc, "/spec/mfa/client_secret",
                         "MFA checks use their own OAuth app: set its client secret")
    return found
