"""The connector resource API as `reviewer serve` serves it: the real app, its settings, its database.

The API's own rules are tested in tests/server/resources/test_resources_api.py on a bare app; here,
that the server mounts it with the right token, secret store and SQLite file, and keeps resources
across restarts.
"""

from __future__ import annotations

import pathlib

from tests.support.server_support import Recorder, running_server

EXAMPLE = pathlib.Path(__file__).resolve().parent.parent.parent / "docs" / "examples" / "connectors" / "okta-oidc.yaml"
OIDC = "/apis/resources.service.dev/v3/oidcconnectors"
TOKEN = "admin-token-for-tests-0123456789abcdef"
CLIENT_SECRET = "the-okta-client-secret-value"


def _settings(tmp_path: pathlib.Path, **extra: str) -> dict[str, str]:
    secrets = tmp_path / "secrets" / "okta"
    secrets.mkdir(parents=True, exist_ok=True)
    (secrets / "client-secret").write_text(CLIENT_SECRET)
    return {"REVIEWER_ADMIN_TOKEN": TOKEN, "REVIEWER_SECRETS_DIR": str(tmp_path / "secrets"), **extra}


async def _call(server, method: str, path: str, *, token: str | None = TOKEN, yaml_text: str | None = None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if yaml_text is not None:
        headers["Content-Type"] = "application/yaml"
    async with server.http.request(method, server.url + path, headers=headers,
                                   data=yaml_text.encode() if yaml_text is not None else None) as response:
        return response.status, await response.json(), await response.text()


def _conditions(obj: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in obj["status"]["conditions"]}


async def test_an_example_round_trips_through_the_server(tmp_path):
    async with running_server(tmp_path, Recorder(), **_settings(tmp_path)) as server:
        status, created, _ = await _call(server, "PUT", f"{OIDC}/okta", yaml_text=EXAMPLE.read_text())
        assert status == 201, created
        assert _conditions(created) == {"ValidStructure": ("True", "NoError"),
                                        "SuccessfullyReconciled": ("True", "NoError")}  # the secret resolved

        status, fetched, text = await _call(server, "GET", f"{OIDC}/okta")
        assert status == 200 and fetched["metadata"]["generation"] == 1
        assert fetched["spec"]["client_secret"] == "secret://okta/client-secret"
        assert _conditions(fetched)["SuccessfullyReconciled"] == ("True", "NoError")
        assert CLIENT_SECRET not in text

        status, listed, _ = await _call(server, "GET", f"{OIDC}?labelSelector=idp%3Dokta")
        assert status == 200 and listed["kind"] == "ServiceOIDCConnectorList"
        assert [item["metadata"]["name"] for item in listed["items"]] == ["okta"]
        assert (await _call(server, "GET", f"{OIDC}?labelSelector=idp%3Dother"))[1]["items"] == []

        status, deleted, _ = await _call(server, "DELETE", f"{OIDC}/okta")
        assert status == 200 and deleted["metadata"]["name"] == "okta"
        status, missing, _ = await _call(server, "GET", f"{OIDC}/okta")
        assert status == 404 and missing["kind"] == "Status" and missing["reason"] == "NotFound"


async def test_a_missing_or_wrong_token_is_refused(tmp_path):
    async with running_server(tmp_path, Recorder(), **_settings(tmp_path)) as server:
        for token in (None, "wrong-token"):
            for method, path in (("GET", OIDC), ("GET", f"{OIDC}/okta"), ("DELETE", f"{OIDC}/okta")):
                status, body, _ = await _call(server, method, path, token=token)
                assert (status, body["reason"]) == (401, "Unauthorized")
            status, _, _ = await _call(server, "PUT", f"{OIDC}/okta", token=token, yaml_text=EXAMPLE.read_text())
            assert status == 401
        assert (await _call(server, "GET", OIDC))[1]["items"] == []  # nothing was written


async def test_without_a_configured_token_everyone_is_refused(tmp_path):
    settings = _settings(tmp_path)
    del settings["REVIEWER_ADMIN_TOKEN"]
    async with running_server(tmp_path, Recorder(), **settings) as server:
        for token in (None, "", "anything"):
            assert (await _call(server, "GET", OIDC, token=token))[0] == 401


async def test_resources_and_their_status_survive_a_restart(tmp_path):
    settings = _settings(tmp_path)
    async with running_server(tmp_path, Recorder(), **settings) as server:
        status, created, _ = await _call(server, "PUT", f"{OIDC}/okta", yaml_text=EXAMPLE.read_text())
        assert status == 201
    async with running_server(tmp_path, Recorder(), **settings) as server:  # a new app on the same file
        status, fetched, _ = await _call(server, "GET", f"{OIDC}/okta")
        assert status == 200
        assert fetched["status"] == created["status"] and fetched["metadata"] == created["metadata"]
        status, replaced, _ = await _call(server, "PUT", f"{OIDC}/okta", yaml_text=EXAMPLE.read_text())
        assert status == 200 and replaced["metadata"]["generation"] == 1  # the same spec: no new generation
        assert replaced["status"]["serviceResourceID"] == created["status"]["serviceResourceID"]
        async with server.http.get(server.url + "/healthz") as response:
            assert response.status == 200  # the delivery store shares the file undisturbed
