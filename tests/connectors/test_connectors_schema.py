"""The structural phase: the shapes' codes for connector documents, the published JSON Schemas
agreeing with them, and the CRDs being structural Kubernetes schemas."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from ruamel.yaml import YAML

from bot.connectors.schemas import crds_yaml, oidc_json_schema, saml_json_schema
from bot.connectors.validate import validate_connector_text
from tests.support.connectors_support import as_yaml, key_pair, oidc_doc, saml_doc

CONDITION = {"type": "SuccessfullyReconciled", "status": "True", "reason": "NoError", "message": "",
             "lastTransitionTime": "2024-05-01T10:00:00Z", "observedGeneration": 1}

OIDC_STRUCTURE = [
    ({"/spec/redirect_urls": ["https://x"]}, ("unknown-property", "/spec/redirect_urls")),
    ({"/spec/mfa": {"enabeld": True}}, ("unknown-property", "/spec/mfa/enabeld")),
    ({"/spec/redirect_url": "https://x"}, ("type", "/spec/redirect_url")),
    ({"/spec/pkce_mode": "on"}, ("enum", "/spec/pkce_mode")),
    ({"/spec/request_object_mode": "always"}, ("enum", "/spec/request_object_mode")),
    ({"/spec/max_age": "1 day"}, ("pattern", "/spec/max_age")),
    ({"/spec/max_age": 1.5}, ("type", "/spec/max_age")),
    ({"/spec/directory_id_groups_provider": {"group_type": "groups"}},
     ("enum", "/spec/directory_id_groups_provider/group_type")),
    ({"/spec/cloud_admin_email": "admin"}, ("pattern", "/spec/cloud_admin_email")),
    ({"/metadata/name": "Okta"}, ("pattern", "/metadata/name")),
    ({"/metadata/name": "passwordless"}, ("reserved-name", "/metadata/name")),
    ({"/metadata/labels": {"team": "a b"}}, ("pattern", "/metadata/labels/team")),
    ({"/apiVersion": "resources.service.dev/v1"}, ("api-version", "/apiVersion")),
    ({"/status": {"conditions": [dict(CONDITION, reason="not ok")]}}, ("pattern", "/status/conditions/0/reason")),
    ({"/status": {"conditions": [dict(CONDITION, status="Maybe")]}}, ("enum", "/status/conditions/0/status")),
    ({"/status": {"conditions": [dict(CONDITION, type="x" * 317)]}}, ("max-length", "/status/conditions/0/type")),
    ({"/status": {"conditions": [dict(CONDITION, message="m" * 32769)]}},
     ("max-length", "/status/conditions/0/message")),
    ({"/status": {"conditions": [dict(CONDITION, observedGeneration=-1)]}},
     ("minimum", "/status/conditions/0/observedGeneration")),
    ({"/status": {"conditions": [{k: v for k, v in CONDITION.items() if k != "reason"}]}},
     ("required", "/status/conditions/0")),
    ({"/status": {"serviceResourceID": 2**63}}, ("maximum", "/status/serviceResourceID")),
    ({"/status": {"conditions": [dict(CONDITION, lastTransitionTime="2024-13-01T10:00:00Z")]}},
     ("format", "/status/conditions/0/lastTransitionTime")),
]

SAML_STRUCTURE = [
    ({"/spec/force_authn": "maybe"}, ("pattern", "/spec/force_authn")),
    ({"/spec/force_authn": 3}, ("maximum", "/spec/force_authn")),
    ({"/spec/force_authn": [1]}, ("type", "/spec/force_authn")),
    ({"/spec/preferred_request_binding": "soap"}, ("enum", "/spec/preferred_request_binding")),
    ({"/spec/signing_key_pair": {"cert": key_pair()[0], "private_key": key_pair()[1], "key": "y"}}, ("unknown-property", "/spec/signing_key_pair/key")),
    ({"/spec/credentials": {"oauth": {"client_id": 5}}}, ("type", "/spec/credentials/oauth/client_id")),
    ({"/kind": "ServiceOIDCConnector", "/apiVersion": "resources.service.dev/v2"}, None),  # a valid OIDC doc shape
]


def _apply(doc: dict, changes: dict) -> dict:
    doc = copy.deepcopy(doc)
    for pointer, value in changes.items():
        *parents, last = pointer[1:].split("/")
        node = doc
        for token in parents:
            node = node.setdefault(token, {})
        node[last] = value
    return doc


@pytest.mark.parametrize("changes,expected", OIDC_STRUCTURE)
def test_oidc_structure(changes, expected):
    doc = _apply(oidc_doc(), changes)
    _, diags = validate_connector_text(as_yaml(doc))
    assert [(d.code, d.pointer) for d in diags] == [expected]
    jsonschema_errors = list(jsonschema.Draft202012Validator(oidc_json_schema()).iter_errors(doc))
    if expected[0] != "format":  # `format` is an annotation in JSON Schema 2020-12, not an assertion
        assert jsonschema_errors, "the published schema must refuse it too"


@pytest.mark.parametrize("changes,expected", [c for c in SAML_STRUCTURE if c[1]])
def test_saml_structure(changes, expected):
    doc = _apply(saml_doc(), changes)
    _, diags = validate_connector_text(as_yaml(doc))
    assert [(d.code, d.pointer) for d in diags] == [expected]
    assert list(jsonschema.Draft202012Validator(saml_json_schema()).iter_errors(doc))


@pytest.mark.parametrize("value", [0, 1, 2, True, False, "", "yes", "No", "OFF", "y", "0"])
def test_force_authn_spellings(value):
    doc = _apply(saml_doc(), {"/spec/force_authn": value, "/spec/mfa": {"force_authn": value}})
    assert validate_connector_text(as_yaml(doc))[1] == []
    jsonschema.validate(doc, saml_json_schema())


@pytest.mark.parametrize("value", ["24h", "1h30m", "never", "0", 3_600_000_000_000, "90s"])
def test_duration_spellings(value):
    doc = _apply(oidc_doc(), {"/spec/max_age": value, "/spec/mfa": {"max_age": value}})
    assert validate_connector_text(as_yaml(doc))[1] == []
    jsonschema.validate(doc, oidc_json_schema())


def test_unknown_field_suggests_the_nearest_known_one():
    doc = _apply(oidc_doc(), {"/spec/redirect_urls": ["https://x"]})
    _, diags = validate_connector_text(as_yaml(doc))
    assert "did you mean `redirect_url`?" in diags[0].message


def test_published_schemas_are_valid_json_schemas():
    for schema in (oidc_json_schema(), saml_json_schema()):
        jsonschema.Draft202012Validator.check_schema(schema)


def test_valid_documents_pass_the_published_schemas():
    full = _apply(oidc_doc(), {"/status": {"conditions": [CONDITION], "serviceResourceID": 7},
                               "/metadata/labels": {"example.com/team": "sso"}})
    jsonschema.validate(full, oidc_json_schema())
    jsonschema.validate(saml_doc(), saml_json_schema())
    assert validate_connector_text(as_yaml(full))[1] == []


def _walk(node: dict, path: str = ""):
    yield path, node
    for key in ("properties",):
        for name, child in node.get(key, {}).items():
            yield from _walk(child, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from _walk(node[key], f"{path}[{key}]")


def test_crds_are_structural_and_carry_both_kinds():
    docs = list(YAML(typ="safe").load_all(crds_yaml()))
    assert [d["spec"]["names"]["kind"] for d in docs] == ["ServiceOIDCConnector", "ServiceSAMLConnector"]
    oidc, saml = docs
    assert [(v["name"], v["storage"]) for v in oidc["spec"]["versions"]] == [("v2", False), ("v3", True)]
    assert [(v["name"], v["storage"]) for v in saml["spec"]["versions"]] == [("v2", True)]
    for doc in docs:
        assert doc["apiVersion"] == "apiextensions.k8s.io/v1" and doc["kind"] == "CustomResourceDefinition"
        for version in doc["spec"]["versions"]:
            assert version["subresources"] == {"status": {}}
            root = version["schema"]["openAPIV3Schema"]
            for path, node in _walk(root):
                typed = "type" in node or node.get("x-kubernetes-int-or-string") or node.get(
                    "x-kubernetes-preserve-unknown-fields")
                assert typed, f"untyped node {path}"
                assert "$ref" not in node and "const" not in node and node.get("additionalProperties") is not False
            spec = root["properties"]["spec"]["properties"]
    assert spec["force_authn"]["x-kubernetes-int-or-string"] is True
    status = root["properties"]["status"]["properties"]
    assert status["serviceResourceID"] == {"type": "integer", "format": "int64",
                                           "description": status["serviceResourceID"]["description"]}
    condition = status["conditions"]["items"]
    assert condition["properties"]["message"]["maxLength"] == 32768
    assert condition["required"] == ["lastTransitionTime", "message", "reason", "status", "type"]


def test_crd_schema_accepts_the_examples_shape():
    """The CRD schema, read as OpenAPI (a JSON Schema subset), accepts a valid spec and refuses a bad enum."""
    oidc = next(YAML(typ="safe").load_all(crds_yaml()))
    schema = oidc["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    jsonschema.validate(oidc_doc()["spec"], schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(oidc_doc()["spec"], pkce_mode="on"), schema)
