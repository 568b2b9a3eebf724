"""`reviewer validate` on connector files: documents, positions, kinds, both phases, secrets."""

from __future__ import annotations

import json

from bot.commands.cli import main
from bot.connectors.validate import validate_connector_text
from tests.support.connectors_support import write_secret

TWO_DOCS = """\
apiVersion: resources.service.dev/v3
kind: ServiceOIDCConnector
metadata:
  name: okta
spec:
  issuer_url: http://example.okta.com
  client_id: abc
  client_secret: secret://okta/client-secret
  redirect_url: ["https://reviewer.example.com/v1/webapi/oidc/callback"]
  claims_to_roles:
    - {claim: groups, value: reviewers, roles: [reviewer]}
---
apiVersion: resources.service.dev/v2
kind: ServiceSAMLConnector
metadata:
  name: local
spec:
  acs: https://reviewer.example.com/v1/webapi/saml/acs/entra
  entity_descriptor_url: https://login.microsoftonline.com/t/federationmetadata/2007-06/federationmetadata.xml
  attributes_to_roles:
    - name: groups
      value: reviewers
      role: [reviewer]
---
"""


def _rows(diags):
    return [(d.document, d.line, d.column, d.pointer, d.code) for d in diags]


def test_documents_positions_and_both_phases():
    kind, diags = validate_connector_text(TWO_DOCS)
    assert kind == "oidc-connector"  # the first document's
    assert _rows(diags) == [
        (0, 6, 15, "/spec/issuer_url", "not-https"),
        (1, 16, 9, "/metadata/name", "reserved-name"),
        (1, 21, 7, "/spec/attributes_to_roles/0", "required"),  # no roles (reconcile)
        (1, 23, 7, "/spec/attributes_to_roles/0/role", "unknown-property"),  # at its key
    ]
    assert "did you mean `roles`?" in diags[-1].message


def test_expected_kind_fills_a_missing_kind_and_refuses_another():
    text = TWO_DOCS.replace("kind: ServiceOIDCConnector\n", "")
    kind, diags = validate_connector_text(text, expected_kind="oidc-connector")
    assert kind == "oidc-connector"
    assert ("kind-mismatch", "/kind", 1) in [(d.code, d.pointer, d.document) for d in diags]
    kind, diags = validate_connector_text(text)
    assert kind is None and (diags[0].code, diags[0].pointer, diags[0].line) == ("required", "", 1)


def test_unknown_kind_and_version():
    kind, diags = validate_connector_text("apiVersion: resources.service.dev/v9\nkind: Widget\nmetadata: {name: a}\n"
                                          "spec: {}\n")
    assert kind is None and [(d.code, d.pointer, d.line) for d in diags] == [("kind-mismatch", "/kind", 2)]
    kind, diags = validate_connector_text("apiVersion: resources.service.dev/v3\nkind: ServiceSAMLConnector\n"
                                          "metadata: {name: a}\nspec: {}\n")
    assert kind == "saml-connector"
    assert ("api-version", "/apiVersion", 1) in [(d.code, d.pointer, d.line) for d in diags]
    assert "resources.service.dev/v2" in diags[0].message


def test_not_a_mapping_and_empty_and_broken_yaml():
    assert [(d.code, d.document) for d in validate_connector_text("- a\n- b\n")[1]] == [("not-a-mapping", 0)]
    assert [d.code for d in validate_connector_text("")[1]] == ["not-a-mapping"]
    diags = validate_connector_text("kind: [unclosed\n")[1]
    assert [d.code for d in diags] == ["yaml-syntax"]


def test_secrets_dir_resolves_references(tmp_path):
    text = TWO_DOCS.split("---")[0].replace("http://", "https://")
    assert validate_connector_text(text)[1] == []  # form only
    _, diags = validate_connector_text(text, secrets_dir=str(tmp_path), check_secrets=True)
    assert [(d.code, d.pointer, d.line) for d in diags] == [("secret-reference", "/spec/client_secret", 8)]
    write_secret(str(tmp_path), "okta", "client-secret", "value")
    assert validate_connector_text(text, secrets_dir=str(tmp_path), check_secrets=True)[1] == []


def test_cli_json_output(tmp_path, capsys):
    path = tmp_path / "connectors.yaml"
    path.write_text(TWO_DOCS)
    assert main(["validate", "--format", "json", str(path)]) == 1
    out = json.loads(capsys.readouterr().out)
    entry = out["files"][0]
    assert entry["kind"] == "oidc-connector" and not entry["valid"]
    assert {e["code"] for e in entry["errors"]} >= {"not-https", "reserved-name", "unknown-property"}
    assert all("document" in e for e in entry["errors"])
