"""Hostile: a connector must never read a secret the admin file references (a model key, say),
whatever the connector is called. Anyone may start a sign-in, and a connector sends its client
secret to the token endpoint its author chose: a connector *named* `openai` that could read
`secret://openai/api-key` would hand the model key to whoever wrote its `issuer_url`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bot.server.app import ADMIN
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.connectors_support import write_secret
from tests.support.oidc_support import (
    ADMIN_TOKEN,
    CLIENT_SECRET,
    Browser,
    HostileProvider,
    connector_doc,
    signin_server,
)
from tests.support.server_support import wait_for

OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
MODEL_KEY = "sk-model-key-value-0123456789"
ACCOUNT_KEY = "sk-account-model-key-9876543210"

ADMIN_YAML = """\
access:
  roles:
    admin: {allow: ["*"]}
providers:
  openai:
    type: openai
    baseUrl: https://api.openai.example/v1
    apiKey: secret://openai/api-key
accounts:
  acme:
    providers:
      acme-llm:
        type: openai
        baseUrl: https://llm.acme.example/v1
        apiKey: secret://acme-llm/key
"""


async def _put(server, doc: dict) -> dict:
    url = f"{server.url}{OIDC_PATH}/{doc['metadata']['name']}"
    async with server.http.put(url, json=doc, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
        assert response.status in (200, 201)
        return await response.json()


def _reconciled(obj: dict) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == "SuccessfullyReconciled")


@pytest.mark.parametrize("name, reference", [
    ("openai", "secret://openai/api-key"),  # the instance's model key, by a connector named after it
    ("openai", "secret://openai/client-secret"),  # another key of the same secret
    ("acme-llm", "secret://acme-llm/key"),  # an account's model key
])
async def test_a_connector_named_after_a_model_key_never_reads_it(tmp_path, name, reference):
    secrets = tmp_path / "secrets"
    write_secret(str(secrets), "openai", "api-key", MODEL_KEY)
    write_secret(str(secrets), "openai", "client-secret", MODEL_KEY)
    write_secret(str(secrets), "acme-llm", "key", ACCOUNT_KEY)
    provider = HostileProvider(client_secret=MODEL_KEY)
    async with provider.serving(), signin_server(tmp_path, ADMIN_YAML, REVIEWER_SECRETS_DIR=str(secrets)) as server:
        obj = await _put(server, connector_doc(name, provider.url, server.url, client_secret=reference))
        condition = _reconciled(obj)
        assert (condition["status"], condition["reason"]) == ("False", "ValidationFailed"), condition
        assert "spec.client_secret" in condition["message"] and "admin file" in condition["message"]
        browser = Browser()
        try:
            status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id={name}")
        finally:
            await browser.close()
        assert status == 400 and "<code>connector</code>" in body
        shown = json.dumps(obj) + body + json.dumps(await server.app[SIGNIN_STORE].signins())
        assert MODEL_KEY not in shown and ACCOUNT_KEY not in shown
    assert provider.token_forms == [] and provider.authorize_params == []  # the provider saw nothing


async def test_a_reload_that_references_a_connectors_secret_stops_it_reading_it(tmp_path):
    """The admin file reloads: from the moment it references a connector's secret, sign-in stops
    reading it (naming the field), and the connector's status says why."""
    secrets = tmp_path / "secrets"
    write_secret(str(secrets), "corp", "client-secret", CLIENT_SECRET)
    admin = "access:\n  roles:\n    admin: {allow: [\"*\"]}\n"
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path, admin, REVIEWER_SECRETS_DIR=str(secrets),
                                                 REVIEWER_ADMIN_RELOAD_SECONDS="0.05") as server:
        obj = await _put(server, connector_doc("corp", provider.url, server.url,
                                               client_secret="secret://corp/client-secret"))
        assert _reconciled(obj)["status"] == "True"
        browser = Browser()
        try:
            await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=corp")
            assert browser.cookie("reviewer_session")  # it works while the admin file leaves the secret alone
        finally:
            await browser.close()
        exchanges = len(provider.token_forms)

        (tmp_path / "admin.yaml").write_text(admin + "providers:\n  corp-model:\n    type: openai\n"
                                             "    baseUrl: https://llm.example/v1\n"
                                             "    apiKey: secret://corp/client-secret\n")
        await wait_for(lambda: _has_provider(server, "corp-model"))
        browser = Browser()
        try:
            status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=corp")
        finally:
            await browser.close()
        assert "<code>secret-reference</code>" in body or "<code>connector</code>" in body, body
        assert status == 400 and len(provider.token_forms) == exchanges  # the secret went nowhere
        entry = (await server.app[SIGNIN_STORE].signins())[0]
        assert entry["ok"] is False and entry["check"] in ("secret-reference", "connector")

        async def moved() -> dict | None:
            async with server.http.get(f"{server.url}{OIDC_PATH}/corp",
                                       headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
                condition = _reconciled(await response.json())
            return condition if condition["status"] == "False" else None
        condition = await wait_for(moved)
        assert condition["reason"] == "ValidationFailed" and "spec.client_secret" in condition["message"]
        assert "admin file" in condition["message"] and CLIENT_SECRET not in json.dumps(condition)


async def _has_provider(server, name: str) -> bool:
    current = server.app[ADMIN].current
    return current is not None and name in current.providers


async def test_the_sign_in_refusal_names_the_field_even_when_the_status_is_stale(tmp_path):
    """Between a reload and the next reconcile the stored status may still say ready: the check
    at sign-in is what stops the secret, and it names the field and the rule."""
    secrets = tmp_path / "secrets"
    write_secret(str(secrets), "corp", "client-secret", CLIENT_SECRET)
    admin = "access:\n  roles:\n    admin: {allow: [\"*\"]}\n"
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path, admin, REVIEWER_SECRETS_DIR=str(secrets),
                                                 REVIEWER_ADMIN_RELOAD_SECONDS="3600") as server:
        await _put(server, connector_doc("corp", provider.url, server.url, client_secret="secret://corp/client-secret"))
        holder = server.app[ADMIN]
        # The admin file in force now names the connector's secret; no reconcile round runs before
        # the next hour (the watches look every REVIEWER_ADMIN_RELOAD_SECONDS), so the status is stale.
        (tmp_path / "admin.yaml").write_text(admin + "providers:\n  corp-model:\n    type: openai\n"
                                             "    baseUrl: https://llm.example/v1\n"
                                             "    apiKey: secret://corp/client-secret\n")
        holder.reload_if_changed()
        browser = Browser()
        try:
            status, _, body = await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=corp")
        finally:
            await browser.close()
        assert status == 400 and "<code>secret-reference</code>" in body, body
        assert "spec.client_secret" in body and "admin file" in body and CLIENT_SECRET not in body
    assert provider.token_forms == []


def test_validate_with_the_admin_file_refuses_such_a_connector(tmp_path):
    (tmp_path / "admin.yaml").write_text(ADMIN_YAML)
    doc = connector_doc("openai", "https://idp.example.com", "https://reviewer.example.com",
                        client_secret="secret://openai/api-key")
    (tmp_path / "openai.yaml").write_text(json.dumps(doc))
    result = subprocess.run([sys.executable, "-m", "bot", "validate", "--admin-config", str(tmp_path / "admin.yaml"),
                             "--format", "json", str(tmp_path / "openai.yaml")], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    [entry] = json.loads(result.stdout)["files"]
    [error] = entry["errors"]
    assert (error["code"], error["pointer"]) == ("secret-reference", "/spec/client_secret")
    assert "admin file" in error["message"]
    # Without the admin file, the same connector is only held to its own-name rule, which it keeps.
    result = subprocess.run([sys.executable, "-m", "bot", "validate", str(tmp_path / "openai.yaml")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
