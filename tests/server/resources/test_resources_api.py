"""The resource API over real HTTP on 127.0.0.1: auth, CRUD, 4xx answers, conditions, concurrency and
restart (its secrets: test_resources_secrets.py)."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from ruamel.yaml import YAML

from tests.server.resources.resource_api import Clock, condition
from tests.support.connectors_support import (
    OIDC_PATH,
    SAML_PATH,
    TOKEN,
    ApiServer,
    oidc_doc,
    saml_doc,
)

SECRET = "literal-client-secret-value"


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}])
async def test_unauthorized_says_nothing_else(api, headers):
    await api.put(OIDC_PATH, oidc_doc())
    for method, path in [("GET", OIDC_PATH), ("GET", f"{OIDC_PATH}/okta"), ("PUT", f"{OIDC_PATH}/okta"),
                         ("DELETE", f"{OIDC_PATH}/okta"), ("GET", SAML_PATH)]:
        async with api.session.request(method, api.base + path, headers=headers or {"Authorization": ""},
                                       json=oidc_doc()) as response:
            assert response.status == 401
            body = await response.json()
            assert body["message"] == "Unauthorized" and "details" not in body
    assert (await api.request("GET", f"{OIDC_PATH}/okta"))[0] == 200  # nothing was deleted


async def test_token_unset_refuses_everyone(tmp_path):
    async with ApiServer(str(tmp_path / "db"), token=None) as server:
        assert (await server.request("GET", OIDC_PATH))[0] == 401
        assert (await server.put(OIDC_PATH, oidc_doc()))[0] == 401


async def test_create_replace_get_list_delete(api):
    status, created = await api.put(OIDC_PATH, oidc_doc())
    assert status == 201
    meta = created["metadata"]
    assert meta["generation"] == 1 and meta["uid"] and meta["creationTimestamp"] == "2024-05-01T10:00:00Z"
    assert created["status"]["serviceResourceID"] >= 1
    assert condition(created, "ValidStructure")["status"] == "True"
    assert condition(created, "SuccessfullyReconciled")["reason"] == "NoError"

    status, replaced = await api.put(OIDC_PATH, oidc_doc())
    assert status == 200 and replaced["metadata"]["generation"] == 1
    assert replaced["metadata"]["resourceVersion"] != meta["resourceVersion"]
    assert replaced["metadata"]["uid"] == meta["uid"]
    assert replaced["status"]["serviceResourceID"] == created["status"]["serviceResourceID"]

    status, got = await api.request("GET", f"{OIDC_PATH}/okta")
    assert status == 200 and got == replaced

    status, listed = await api.request("GET", OIDC_PATH)
    assert listed["kind"] == "ServiceOIDCConnectorList" and listed["apiVersion"] == "resources.service.dev/v3"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["okta"]
    assert listed["metadata"]["resourceVersion"]

    status, deleted = await api.request("DELETE", f"{OIDC_PATH}/okta")
    assert status == 200 and deleted["metadata"]["uid"] == meta["uid"]
    status, missing = await api.request("GET", f"{OIDC_PATH}/okta")
    assert status == 404 and missing["kind"] == "Status" and missing["reason"] == "NotFound"
    assert (await api.request("DELETE", f"{OIDC_PATH}/okta"))[0] == 404


async def test_label_selector(api):
    for name, labels in [("a", {"env": "prod", "team": "sso"}), ("b", {"env": "dev"}), ("c", {"env": "prod"})]:
        doc = oidc_doc()
        doc["metadata"] = {"name": name, "labels": labels}
        assert (await api.put(OIDC_PATH, doc))[0] == 201

    async def names(selector: str) -> list[str]:
        status, body = await api.request("GET", f"{OIDC_PATH}?labelSelector={selector}")
        assert status == 200
        return [i["metadata"]["name"] for i in body["items"]]

    assert await names("env=prod") == ["a", "c"]
    assert await names("env=prod,team!=sso") == ["c"]
    assert await names("env==dev") == ["b"]
    assert await names("team") == ["a"]
    assert await names("!team") == ["b", "c"]
    assert (await api.request("GET", f"{OIDC_PATH}?labelSelector=env%20in%20(a)"))[0] == 400


async def test_yaml_body_and_media_types(api):
    doc = saml_doc()
    status, body = await api.request("PUT", f"{SAML_PATH}/okta-saml", yaml_text=_yaml(doc))
    assert status == 201, body
    assert condition(body, "SuccessfullyReconciled")["status"] == "True", body
    status, body = await api.request("PUT", f"{SAML_PATH}/okta-saml", body=None,
                                     headers={"Content-Type": "text/plain"})
    assert status == 415 and body["reason"] == "UnsupportedMediaType"
    status, body = await api.request("PUT", f"{SAML_PATH}/okta-saml", yaml_text="spec: [unclosed")
    assert status == 400 and "YAML" in body["message"]
    async with api.session.put(api.base + f"{SAML_PATH}/x", data=b"{nope",
                               headers={"Content-Type": "application/json"}) as response:
        assert response.status == 400
    async with api.session.put(api.base + f"{SAML_PATH}/x", data=b"x" * (300 * 1024),
                               headers={"Content-Type": "application/json"}) as response:
        assert response.status == 413


def _yaml(doc: dict) -> str:
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(doc, out)
    return out.getvalue()


async def test_422_lists_every_structural_error(api):
    doc = oidc_doc()
    doc["spec"]["redirect_urls"] = ["https://x"]
    doc["spec"]["pkce_mode"] = "on"
    doc["spec"]["client_secret"] = 123456789
    status, body = await api.put(OIDC_PATH, doc)
    assert status == 422 and body["kind"] == "Status" and body["reason"] == "Invalid"
    causes = {(c["field"], c["reason"]) for c in body["details"]["causes"]}
    assert causes == {("/spec/redirect_urls", "unknown-property"), ("/spec/pkce_mode", "enum"),
                      ("/spec/client_secret", "type")}
    assert "did you mean `redirect_url`?" in body["message"]
    assert "123456789" not in str(body)
    assert (await api.request("GET", f"{OIDC_PATH}/okta"))[0] == 404  # nothing stored


@pytest.mark.parametrize("name", ["local", "passwordless", "headless", "browser"])
async def test_reserved_names(api, name):
    doc = oidc_doc()
    doc["metadata"]["name"] = name
    status, body = await api.put(OIDC_PATH, doc)
    assert status == 422 and body["details"]["causes"][0]["reason"] == "reserved-name"


async def test_400s(api):
    doc = oidc_doc()
    doc["apiVersion"] = "resources.service.dev/v1"
    status, body = await api.put(OIDC_PATH, doc)
    assert status == 400 and "resources.service.dev/v2, resources.service.dev/v3" in body["message"]
    status, body = await api.request("PUT", f"{SAML_PATH}/okta", body=oidc_doc())
    assert status == 400 and "apiVersion" in body["message"]  # v3 is not a SAML version
    doc = oidc_doc()
    doc["kind"] = "ServiceSAMLConnector"
    assert (await api.put(OIDC_PATH, doc))[0] == 400
    status, body = await api.request("PUT", f"{OIDC_PATH}/other", body=oidc_doc())
    assert status == 400 and "does not match the name in the path" in body["message"]


async def test_kind_and_name_come_from_the_path(api):
    doc = oidc_doc()
    del doc["kind"]
    del doc["metadata"]["name"]
    status, body = await api.request("PUT", f"{OIDC_PATH}/from-path", body=doc)
    assert status == 201 and body["metadata"]["name"] == "from-path" and body["kind"] == "ServiceOIDCConnector"


async def test_v2_body_is_stored_as_v3(api):
    doc = oidc_doc()
    doc["apiVersion"] = "resources.service.dev/v2"
    status, body = await api.put(OIDC_PATH, doc)
    assert status == 201 and body["apiVersion"] == "resources.service.dev/v3"
    assert (await api.request("GET", f"{OIDC_PATH}/okta"))[1]["apiVersion"] == "resources.service.dev/v3"


async def test_stale_resource_version_is_a_conflict(api):
    _, first = await api.put(OIDC_PATH, oidc_doc())
    version = first["metadata"]["resourceVersion"]
    doc = oidc_doc()
    doc["metadata"]["resourceVersion"] = version
    doc["spec"]["display"] = "Okta"
    status, second = await api.put(OIDC_PATH, doc)
    assert status == 200 and second["metadata"]["generation"] == 2
    status, body = await api.put(OIDC_PATH, doc)  # the same, now stale, version
    assert status == 409 and body["reason"] == "Conflict"
    doc["metadata"]["name"] = "absent"
    assert (await api.put(OIDC_PATH, doc))[0] == 409


async def test_two_writers_with_one_version_one_wins(api):
    _, first = await api.put(OIDC_PATH, oidc_doc())
    writers = []
    for display in ("A", "B"):
        doc = oidc_doc()
        doc["metadata"]["resourceVersion"] = first["metadata"]["resourceVersion"]
        doc["spec"]["display"] = display
        writers.append(api.put(OIDC_PATH, doc))
    results = await asyncio.gather(*writers)
    assert sorted(status for status, _ in results) == [200, 409]
    winner = next(body for status, body in results if status == 200)
    assert (await api.request("GET", f"{OIDC_PATH}/okta"))[1]["spec"]["display"] == winner["spec"]["display"]


async def test_generation_and_condition_transitions(tmp_path):
    clock = Clock()
    async with ApiServer(str(tmp_path / "db"), clock=clock) as api:
        bad = oidc_doc()
        bad["spec"]["issuer_url"] = "http://example.okta.com"
        _, obj = await api.put(OIDC_PATH, bad)
        failed = condition(obj, "SuccessfullyReconciled")
        assert (failed["status"], failed["reason"], failed["observedGeneration"]) == ("False", "ValidationFailed", 1)
        assert "spec.issuer_url" in failed["message"] and "https" in failed["message"]
        assert failed["lastTransitionTime"] == "2024-05-01T10:00:00Z"

        clock.tick()  # still invalid, another problem too: no transition
        bad["spec"]["redirect_url"] = []
        _, obj = await api.put(OIDC_PATH, bad)
        still = condition(obj, "SuccessfullyReconciled")
        assert still["lastTransitionTime"] == "2024-05-01T10:00:00Z" and still["observedGeneration"] == 2
        assert still["message"].startswith("2 problems")

        clock.tick()  # fixed: the condition flips, and its time moves
        _, obj = await api.put(OIDC_PATH, oidc_doc())
        fixed = condition(obj, "SuccessfullyReconciled")
        assert (fixed["status"], fixed["reason"], fixed["observedGeneration"]) == ("True", "NoError", 3)
        assert fixed["lastTransitionTime"] == "2024-05-01T10:02:00Z"
        assert condition(obj, "ValidStructure")["lastTransitionTime"] == "2024-05-01T10:00:00Z"

        clock.tick()  # re-applied unchanged (labels aside): generation and time stay
        same = oidc_doc()
        same["metadata"]["labels"] = {"team": "sso"}
        _, obj = await api.put(OIDC_PATH, same)
        assert obj["metadata"]["generation"] == 3
        assert condition(obj, "SuccessfullyReconciled")["lastTransitionTime"] == "2024-05-01T10:02:00Z"


async def test_client_status_and_server_metadata_are_ignored(api):
    doc = oidc_doc()
    doc["status"] = {"serviceResourceID": 999, "conditions": "garbage"}
    doc["metadata"].update(generation=42, uid="mine", creationTimestamp="1999-01-01T00:00:00Z")
    status, body = await api.put(OIDC_PATH, doc)
    assert status == 201
    assert body["status"]["serviceResourceID"] != 999 and body["metadata"]["generation"] == 1
    assert body["metadata"]["uid"] != "mine" and body["metadata"]["creationTimestamp"] != "1999-01-01T00:00:00Z"


async def test_everything_survives_a_restart(tmp_path):
    db = str(tmp_path / "reviewer.db")
    async with ApiServer(db) as api:
        _, first = await api.put(OIDC_PATH, oidc_doc())
        bad = saml_doc()
        bad["spec"]["sso"] = "http://insecure"
        _, saml = await api.put(SAML_PATH, bad)
    async with ApiServer(db) as api:
        assert (await api.request("GET", f"{OIDC_PATH}/okta"))[1] == first
        assert (await api.request("GET", f"{SAML_PATH}/okta-saml"))[1] == saml
        assert condition(saml, "SuccessfullyReconciled")["status"] == "False"
        doc = oidc_doc()
        doc["metadata"]["name"] = "second"
        _, second = await api.put(OIDC_PATH, doc)
        assert second["status"]["serviceResourceID"] > saml["status"]["serviceResourceID"]
        assert int(second["metadata"]["resourceVersion"]) > int(saml["metadata"]["resourceVersion"])
        doc = oidc_doc()
        doc["metadata"]["resourceVersion"] = first["metadata"]["resourceVersion"]
        doc["spec"]["display"] = "Okta"
        assert (await api.put(OIDC_PATH, doc))[0] == 200  # the version read before the restart still holds


async def _put_raw(api, path: str, data: bytes, media: str) -> tuple[int, dict]:
    async with api.session.put(api.base + path, data=data, headers={"Content-Type": media}) as response:
        return response.status, await response.json()


def _spec_with(value: str) -> str:
    """The OIDC example as JSON text, with `value` written raw as the field `extra` of its spec."""
    text = json.dumps(oidc_doc())
    return text[:-2] + f', "extra": {value}' + text[-2:]


@pytest.mark.parametrize(("media", "body", "reason", "field"), [
    ("application/json", _spec_with("[" * 100_000 + "]" * 100_000), "too-deep", "/spec/extra" + "/0" * 63),
    ("application/json", _spec_with("[" * 70 + "]" * 70), "too-deep", "/spec/extra" + "/0" * 63),
    ("application/json", _spec_with('{"k": ' * 2_000 + "1" + "}" * 2_000), "too-deep", "/spec/extra" + "/k" * 63),
    ("application/yaml", _spec_with("[" * 100_000 + "]" * 100_000), "too-deep", "/spec/extra" + "/0" * 63),
    ("application/json", _spec_with("9" * 20_000), "too-large", "/spec/extra"),
    ("application/yaml", _spec_with("9" * 20_000), "too-large", "/spec/extra"),
    ("application/yaml", _spec_with("{1: a}"), "non-string-key", "/spec/extra/1"),
])
async def test_bodies_past_the_parsing_bounds_are_422_naming_the_place(api, media, body, reason, field):
    # JSON: a nesting past the recursion limit was a 400 saying nowhere, a long integer a 500;
    # YAML: any of these a 400, or a crashed server.
    status, answer = await _put_raw(api, f"{OIDC_PATH}/okta", body.encode(), media)
    assert (status, answer["kind"], answer["reason"]) == (422, "Status", "Invalid"), answer
    [cause] = answer["details"]["causes"]
    assert (cause["reason"], cause["field"]) == (reason, field)
    assert answer["details"]["name"] == "okta" and SECRET not in json.dumps(answer)
    assert (await api.request("GET", f"{OIDC_PATH}/okta"))[0] == 404  # nothing stored


@pytest.mark.parametrize(("tagged", "said"), [
    ("!!float xyz", "!!float cannot hold 'xyz'"), ("!!int 1.5", "!!int cannot hold '1.5'"),
    ("!!bool yes", "!!bool cannot hold 'yes'"), ("!!timestamp soon", "!!timestamp cannot hold 'soon'"),
    ("!!binary aGVsbG8=", "!!binary is not supported"), ("!custom x", "!custom is not supported"),
    ("!!python/object:os.system {a: 1}", "!!python/object:os.system is not supported"),
])
async def test_a_yaml_body_with_an_explicit_tag_that_cannot_hold_its_value_is_422(api, tagged, said):
    # `!!float xyz` was a 500 (a ValueError in the loader), `!custom x` a 400 saying "not YAML".
    status, answer = await _put_raw(api, f"{OIDC_PATH}/okta", _spec_with(tagged).encode(), "application/yaml")
    assert (status, answer["kind"], answer["reason"]) == (422, "Status", "Invalid"), answer
    [cause] = answer["details"]["causes"]
    assert (cause["reason"], cause["field"]) == ("yaml-tag", "/spec/extra")
    assert said in cause["message"] and "(line 1, column" in cause["message"]
    assert (await api.request("GET", f"{OIDC_PATH}/okta"))[0] == 404  # nothing stored


async def test_paths_and_methods_no_route_serves_answer_a_status(api):
    status, body = await api.request("GET", "/apis/resources.service.dev/v9/widgets")
    assert status == 404 and body["kind"] == "Status" and body["reason"] == "NotFound" and body["code"] == 404
    assert "/apis/resources.service.dev/<version>/<kind plural>" in body["message"]
    async with api.session.request("PATCH", api.base + f"{OIDC_PATH}/okta", json={}) as response:
        body = await response.json()
        assert response.status == 405 and body["kind"] == "Status" and body["reason"] == "MethodNotAllowed"
        assert response.headers["Allow"] == "DELETE,GET,HEAD,PUT" and "allowed: DELETE, GET, HEAD, PUT" in body["message"]
    async with api.session.get(api.base + "/not-an-api-path") as response:  # elsewhere aiohttp's own answer
        assert response.status == 404 and response.content_type == "text/plain"
