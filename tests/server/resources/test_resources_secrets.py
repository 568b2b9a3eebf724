"""The resource API's secrets over real HTTP: `secret://` references looked up (and never another
part of the store), literal secrets redacted in every answer and log line, and `<redacted>` kept
only while the secret still goes where it went."""

from __future__ import annotations

import logging

import pytest

from tests.server.resources.resource_api import condition
from tests.support.connectors_support import OIDC_PATH, SAML_PATH, ApiServer, key_pair, oidc_doc, saml_doc, write_secret

SECRET = "literal-client-secret-value"


async def test_secret_lookup(tmp_path):
    secrets = tmp_path / "secrets"
    doc = oidc_doc()
    doc["spec"]["client_secret"] = "secret://okta/client-secret"
    async with ApiServer(str(tmp_path / "db"), secrets_dir=str(secrets)) as api:
        _, obj = await api.put(OIDC_PATH, doc)
        cond = condition(obj, "SuccessfullyReconciled")
        assert (cond["status"], cond["reason"]) == ("False", "SecretLookupFailed")
        assert "secret://okta/client-secret" in cond["message"]
        assert obj["spec"]["client_secret"] == "secret://okta/client-secret"  # references are shown

        doc["spec"]["issuer_url"] = "http://plain"  # both apply: ValidationFailed wins
        _, obj = await api.put(OIDC_PATH, doc)
        assert condition(obj, "SuccessfullyReconciled")["reason"] == "ValidationFailed"

        write_secret(str(secrets), "okta", "client-secret", "the-real-secret\n")
        _, obj = await api.put(OIDC_PATH, oidc_doc() | {"spec": {**oidc_doc()["spec"],
                                                                 "client_secret": "secret://okta/client-secret"}})
        assert condition(obj, "SuccessfullyReconciled")["status"] == "True"


async def test_secrets_are_redacted_everywhere(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    cert, key, _ = key_pair()
    seen: list[str] = []
    async with ApiServer(str(tmp_path / "db")) as api:
        saml = saml_doc()
        saml["spec"]["signing_key_pair"] = {"cert": cert, "private_key": key}
        saml["spec"]["credentials"] = {"oauth": {"client_id": "c", "client_secret": "graph-secret-value"}}
        for _status, body in [await api.put(SAML_PATH, saml), await api.put(OIDC_PATH, oidc_doc()),
                             await api.request("GET", SAML_PATH), await api.request("GET", OIDC_PATH),
                             await api.request("GET", f"{SAML_PATH}/okta-saml")]:
            seen.append(str(body))
        _, shown = await api.request("GET", f"{SAML_PATH}/okta-saml")
        assert shown["spec"]["signing_key_pair"]["private_key"] == "<redacted>"
        assert shown["spec"]["credentials"]["oauth"]["client_secret"] == "<redacted>"

        # GET → edit → PUT: `<redacted>` keeps the stored key, which still matches its certificate.
        shown["spec"]["display"] = "Okta"
        status, body = await api.put(SAML_PATH, shown)
        assert status == 200 and condition(body, "SuccessfullyReconciled")["status"] == "True", body
        seen.append(str(body))

        # A wrong key in a failing reconcile: the message names the field, not the key.
        broken = saml_doc()
        broken["spec"]["signing_key_pair"] = {"cert": cert, "private_key": key_pair("other")[1]}
        _, body = await api.put(SAML_PATH, broken)
        assert "does not belong" in str(body)
        seen.append(str(body))

        fresh = oidc_doc()
        fresh["metadata"]["name"] = "fresh"
        fresh["spec"]["client_secret"] = "<redacted>"
        status, body = await api.put(OIDC_PATH, fresh)
        assert status == 422 and body["details"]["causes"][0]["field"] == "/spec/client_secret"
        seen.append(str(body))
        seen.append(str((await api.request("DELETE", f"{OIDC_PATH}/okta"))[1]))
    secrets = [SECRET, "graph-secret-value", key.splitlines()[1], key_pair("other")[1].splitlines()[1]]
    for text in seen + [caplog.text]:
        for secret in secrets:
            assert secret not in text
    assert "okta-saml" in caplog.text  # the log does name objects


async def test_a_connector_cannot_read_another_secret_of_the_store(tmp_path):
    """Hostile: the store also holds model API keys; a connector naming one must not resolve it."""
    secrets = tmp_path / "secrets"
    write_secret(str(secrets), "openai", "api-key", "sk-model-key-value")
    doc = oidc_doc()
    doc["spec"]["client_secret"] = "secret://openai/api-key"
    async with ApiServer(str(tmp_path / "db"), secrets_dir=str(secrets)) as api:
        _, obj = await api.put(OIDC_PATH, doc)
        cond = condition(obj, "SuccessfullyReconciled")
        assert (cond["status"], cond["reason"]) == ("False", "ValidationFailed")
        assert "spec.client_secret" in cond["message"] and "metadata.name" in cond["message"]
        assert "secret://okta/api-key" in cond["message"]  # says what to write instead
        assert "sk-model-key-value" not in str(obj)


@pytest.mark.parametrize("field, value", [
    ("issuer_url", "https://attacker.example"),
    ("client_id", "attacker-client"),
    ("mfa", {"enabled": True, "client_id": "x", "client_secret": "<redacted>"}),
])
async def test_redacted_is_not_kept_when_the_secret_would_go_elsewhere(api, field, value):
    """Hostile: GET → point the connector at another endpoint → PUT `<redacted>` must not keep the
    stored literal secret, or the next sign-in would send it to the new endpoint."""
    await api.put(OIDC_PATH, oidc_doc())
    _, shown = await api.request("GET", f"{OIDC_PATH}/okta")
    assert shown["spec"]["client_secret"] == "<redacted>"
    shown["spec"][field] = value
    status, body = await api.put(OIDC_PATH, shown)
    assert status == 422, body
    causes = body["details"]["causes"]
    assert causes[0]["field"] == "/spec/client_secret"
    assert f"spec.{field}" in causes[0]["message"]
    _, kept = await api.request("GET", f"{OIDC_PATH}/okta")
    assert kept["spec"].get(field) != value  # nothing was stored


async def test_saml_redacted_is_not_kept_when_the_sso_url_changes(api):
    saml = saml_doc()
    saml["spec"]["credentials"] = {"oauth": {"client_id": "c", "client_secret": "graph-secret-value"}}
    await api.put(SAML_PATH, saml)
    _, shown = await api.request("GET", f"{SAML_PATH}/okta-saml")
    shown["spec"]["entity_descriptor_url"] = "https://attacker.example/metadata"
    status, body = await api.put(SAML_PATH, shown)
    assert status == 422 and body["details"]["causes"][0]["field"] == "/spec/credentials/oauth/client_secret"
