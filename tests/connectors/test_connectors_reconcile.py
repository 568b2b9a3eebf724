"""The reconcile rules, each with a failing and a passing case, through `validate_connector_text`
(what `reviewer validate` runs offline; the API runs the same phase and reports it in `status`)."""

from __future__ import annotations

import pytest

from bot.connectors.validate import validate_connector_text
from bot.documents.pointers import get_at
from tests.support.connectors_support import as_yaml, descriptor, key_pair, oidc_doc, saml_doc, write_secret


def _set(doc: dict, pointer: str, value) -> dict:
    *parents, last = pointer[1:].split("/")
    node = doc
    for token in parents:
        node = node[int(token)] if isinstance(node, list) else node.setdefault(token, {})
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return doc


_DELETE = object()


def _errors(doc: dict, **kw) -> list[tuple[str, str]]:
    _, diags = validate_connector_text(as_yaml(doc), **kw)
    return [(d.code, d.pointer) for d in diags]


OIDC_FAILING = [
    ("/spec/client_id", _DELETE, ("required", "/spec")),
    ("/spec/client_id", "", ("required", "/spec/client_id")),
    ("/spec/client_secret", _DELETE, ("required", "/spec")),
    ("/spec/redirect_url", [], ("required", "/spec/redirect_url")),
    ("/spec/redirect_url", ["/v1/webapi/oidc/callback"], ("format", "/spec/redirect_url/0")),
    ("/spec/claims_to_roles", _DELETE, ("required", "/spec")),
    ("/spec/claims_to_roles", [{"claim": "groups", "value": "x", "roles": []}],
     ("required", "/spec/claims_to_roles/0/roles")),
    ("/spec/claims_to_roles", [{"claim": "groups", "value": "^(admin$", "roles": ["a"]}],
     ("invalid-regex", "/spec/claims_to_roles/0/value")),
    ("/spec/issuer_url", "http://example.okta.com", ("not-https", "/spec/issuer_url")),
    ("/spec/issuer_url", "http://127.0.0.1.example.com", ("not-https", "/spec/issuer_url")),
    ("/spec/issuer_url", "http://10.0.0.1", ("not-https", "/spec/issuer_url")),
    ("/spec/issuer_url", "example.okta.com", ("format", "/spec/issuer_url")),
    ("/spec/cloud_service_account_uri", "/etc/sa.json", ("requires", "/spec/cloud_service_account_uri")),
    ("/spec/max_age", "1.5s", ("format", "/spec/max_age")),
    ("/spec/max_age", "-1h", ("minimum", "/spec/max_age")),
    ("/spec/mfa", {"max_age": 1_500_000_000}, ("format", "/spec/mfa/max_age")),
    ("/spec/mfa", {"max_age": -1}, ("minimum", "/spec/mfa/max_age")),
    ("/spec/mfa", {"enabled": True, "client_id": "m"}, ("required", "/spec/mfa")),
    ("/spec/client_secret", "secret://Bad_Name/key", ("secret-reference", "/spec/client_secret")),
    ("/spec/client_secret", "<CLIENT_SECRET>", ("placeholder", "/spec/client_secret")),
    ("/spec/client_redirect_settings", {"insecure_allowed_cidr_ranges": ["10.0.0.0"]},
     ("invalid-cidr", "/spec/client_redirect_settings/insecure_allowed_cidr_ranges/0")),
    ("/spec/client_redirect_settings", {"insecure_allowed_cidr_ranges": ["10.0.0.0/33"]},
     ("invalid-cidr", "/spec/client_redirect_settings/insecure_allowed_cidr_ranges/0")),
    ("/spec/client_redirect_settings", {"allowed_https_hostnames": ["https://app.example.com"]},
     ("invalid-hostname", "/spec/client_redirect_settings/allowed_https_hostnames/0")),
    ("/spec/client_redirect_settings", {"allowed_https_hostnames": ["bad_host!"]},
     ("invalid-hostname", "/spec/client_redirect_settings/allowed_https_hostnames/0")),
    ("/spec/client_redirect_settings", {"allowed_https_hostnames": ["^(app$"]},
     ("invalid-regex", "/spec/client_redirect_settings/allowed_https_hostnames/0")),
    ("/spec/directory_id_groups_provider", {"graph_endpoint": "https://graph.example.com"},
     ("enum", "/spec/directory_id_groups_provider/graph_endpoint")),
]

OIDC_PASSING = [
    ("/spec/issuer_url", "http://127.0.0.1:8080"),  # http on a loopback host: a provider on this machine
    ("/spec/issuer_url", "http://localhost:5556/dex"),
    ("/spec/issuer_url", "http://[::1]:9000"),
    ("/spec/max_age", "24h"),
    ("/spec/max_age", "never"),
    ("/spec/mfa", {"enabled": True, "client_id": "m", "client_secret": "s", "max_age": 0}),
    ("/spec/mfa", {"max_age": 3_600_000_000_000}),
    ("/spec/claims_to_roles", [{"claim": "groups", "value": "^admin-.*$", "roles": ["a"]}]),
    ("/spec/client_redirect_settings", {"insecure_allowed_cidr_ranges": ["10.0.0.0/8", "fd00::/8"],
                                        "allowed_https_hostnames": ["app.example.com", "*.example.com",
                                                                    "^.*\\.example\\.com$"]}),
    ("/spec/directory_id_groups_provider", {"graph_endpoint": "https://graph.microsoft.us"}),
    ("/spec/client_secret", "secret://okta/client-secret"),  # form only: no secrets dir
]


@pytest.mark.parametrize("pointer,value,expected", OIDC_FAILING)
def test_oidc_rule_fails(pointer, value, expected):
    assert _errors(_set(oidc_doc(), pointer, value)) == [expected]


@pytest.mark.parametrize("pointer,value", OIDC_PASSING)
def test_oidc_rule_passes(pointer, value):
    assert _errors(_set(oidc_doc(), pointer, value)) == []


def test_oidc_service_account_exclusive_and_email():
    doc = oidc_doc()
    doc["spec"].update(cloud_service_account="{}", cloud_service_account_uri="/etc/sa.json")
    assert ("exclusive", "/spec/cloud_service_account_uri") in _errors(doc)
    doc["spec"].update(cloud_admin_email="admin@example.com")
    assert _errors(doc) == [("exclusive", "/spec/cloud_service_account_uri")]
    del doc["spec"]["cloud_service_account"]
    assert _errors(doc) == []


def test_placeholder_is_reported_alone_and_names_the_fix():
    doc = _set(saml_doc(), "/spec/signing_key_pair", {"cert": key_pair()[0], "private_key": "<PRIVATE_KEY>"})
    _, diags = validate_connector_text(as_yaml(doc))
    assert [(d.code, d.pointer) for d in diags] == [("placeholder", "/spec/signing_key_pair/private_key")]
    assert "put the real value" in diags[0].message and "secret://" in diags[0].message


def _saml_without_idp() -> dict:
    doc = saml_doc()
    for field in ("issuer", "sso", "cert"):
        del doc["spec"][field]
    return doc


SAML_FAILING = [
    ("/spec/acs", _DELETE, ("required", "/spec")),
    ("/spec/acs", "not a url", ("format", "/spec/acs")),
    ("/spec/sso", "http://example.okta.com/sso", ("not-https", "/spec/sso")),
    ("/spec/cert", "not a certificate", ("invalid-pem", "/spec/cert")),
    ("/spec/cert", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", ("invalid-pem", "/spec/cert")),
    ("/spec/cert", _DELETE, ("required", "/spec")),
    ("/spec/attributes_to_roles", [], ("required", "/spec/attributes_to_roles")),
    ("/spec/attributes_to_roles", [{"name": "groups", "value": "x"}], ("required", "/spec/attributes_to_roles/0")),
    ("/spec/attributes_to_roles", [{"name": "g", "value": "^[a$", "roles": ["r"]}],
     ("invalid-regex", "/spec/attributes_to_roles/0/value")),
    ("/spec/signing_key_pair", {"cert": key_pair()[0], "private_key": key_pair("other")[1]},
     ("key-mismatch", "/spec/signing_key_pair/private_key")),
    ("/spec/assertion_key_pair", {"cert": key_pair()[0], "private_key": "-----BEGIN PRIVATE KEY-----\nAA\n"
                                                                       "-----END PRIVATE KEY-----\n"},
     ("invalid-pem", "/spec/assertion_key_pair/private_key")),
    ("/spec/assertion_key_pair", {"cert": key_pair()[0]}, ("required", "/spec/assertion_key_pair")),
    ("/spec/credentials", {"oauth": {"client_secret": "s"}}, ("required", "/spec/credentials/oauth")),
    ("/spec/mfa", {"enabled": True}, ("required", "/spec/mfa")),
    ("/spec/mfa", {"cert": "nope"}, ("invalid-pem", "/spec/mfa/cert")),
    ("/spec/entity_descriptor_url", "http://idp.example.com/metadata", ("not-https", "/spec/entity_descriptor_url")),
    ("/spec/client_redirect_settings", {"insecure_allowed_cidr_ranges": ["300.0.0.0/8"]},
     ("invalid-cidr", "/spec/client_redirect_settings/insecure_allowed_cidr_ranges/0")),
    ("/spec/directory_id_groups_provider", {"graph_endpoint": "https://graph.windows.net"},
     ("enum", "/spec/directory_id_groups_provider/graph_endpoint")),
    ("/spec/credentials", {"oauth": {"client_id": "c", "client_secret": "<CLIENT_SECRET>"}},
     ("placeholder", "/spec/credentials/oauth/client_secret")),
]


@pytest.mark.parametrize("pointer,value,expected", SAML_FAILING)
def test_saml_rule_fails(pointer, value, expected):
    assert _errors(_set(saml_doc(), pointer, value)) == [expected]


def test_saml_idp_initiated_needs_acs_ending_with_name():
    doc = _set(saml_doc(), "/spec/allow_idp_initiated", True)
    doc["spec"]["acs"] = "https://reviewer.example.com/v1/webapi/saml/acs"
    _, diags = validate_connector_text(as_yaml(doc))
    assert [(d.code, d.pointer) for d in diags] == [("pattern", "/spec/acs")]
    assert "/okta-saml" in diags[0].message
    doc["spec"]["acs"] += "/okta-saml"
    assert _errors(doc) == []


def test_saml_needs_an_identity_provider():
    assert _errors(_saml_without_idp()) == [("required", "/spec")]
    assert _errors(_set(_saml_without_idp(), "/spec/issuer", "x")) == [("required", "/spec")]


SAML_PASSING = [
    ("/spec/entity_descriptor_url", "https://idp.example.com/metadata"),
    ("/spec/entity_descriptor", descriptor()),
    ("/spec/signing_key_pair", {"cert": key_pair()[0], "private_key": key_pair()[1]}),
    ("/spec/credentials", {"oauth": {"client_id": "c", "client_secret": "secret://okta-saml/graph"}}),
    ("/spec/mfa", {"enabled": True, "entity_descriptor_url": "https://idp.example.com/mfa-metadata"}),
    ("/spec/mfa", {"enabled": True, "issuer": "x", "sso": "https://idp.example.com/mfa", "cert": key_pair()[0]}),
    ("/spec/force_authn", "YES"),
    ("/spec/allow_idp_initiated", False),
]


@pytest.mark.parametrize("pointer,value", SAML_PASSING)
def test_saml_rule_passes(pointer, value):
    base = _saml_without_idp() if pointer in ("/spec/entity_descriptor_url", "/spec/entity_descriptor") else saml_doc()
    assert _errors(_set(base, pointer, value)) == []


def test_descriptor_supplies_issuer_sso_and_certificate():
    doc = _set(_saml_without_idp(), "/spec/entity_descriptor", descriptor())
    assert _errors(doc) == []


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="&lol2;"/>"""
XXE = """<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="&xxe;"/>"""


@pytest.mark.parametrize("xml,words", [
    (BILLION_LAUGHS, "DTD"), (XXE, "DTD"), ("<md:EntityDescriptor", "not well-formed"),
    (descriptor(sso="http://idp.example.com/sso"), "https"),
    (descriptor(cert_der=b"not der"), "certificate"),
])
def test_descriptor_refused(xml, words):
    doc = _set(_saml_without_idp(), "/spec/entity_descriptor", xml)
    doc["spec"]["cert"] = key_pair()[0]
    _, diags = validate_connector_text(as_yaml(doc))
    assert [d.pointer for d in diags] == ["/spec/entity_descriptor"]
    assert diags[0].code in ("invalid-xml", "not-https", "invalid-pem")
    assert words in diags[0].message
    assert "root:" not in diags[0].message  # nothing of /etc/passwd


def test_secret_references_resolve_with_a_secrets_dir(tmp_path):
    cert, key, _ = key_pair()
    doc = saml_doc()
    doc["spec"]["signing_key_pair"] = {"cert": cert, "private_key": write_secret(str(tmp_path), "okta-saml", "key", key)}
    assert _errors(doc, secrets_dir=str(tmp_path), check_secrets=True) == []
    # The referenced key is parsed and matched: another pair's key is a mismatch.
    write_secret(str(tmp_path), "okta-saml", "key", key_pair("other")[1])
    assert _errors(doc, secrets_dir=str(tmp_path), check_secrets=True) == [
        ("key-mismatch", "/spec/signing_key_pair/private_key")]
    doc["spec"]["signing_key_pair"]["private_key"] = "secret://okta-saml/absent"
    _, diags = validate_connector_text(as_yaml(doc), secrets_dir=str(tmp_path), check_secrets=True)
    assert [(d.code, d.pointer) for d in diags] == [("secret-reference", "/spec/signing_key_pair/private_key")]
    assert "secret://okta-saml/absent" in diags[0].message
    # Without a secrets dir, references are checked for form only.
    assert _errors(doc) == []


def test_messages_name_the_field_and_never_a_secret_value():
    doc = oidc_doc()
    doc["spec"]["client_secret"] = "secret://Bad/x"
    doc["spec"]["mfa"] = {"enabled": True, "client_secret": "hunter2-mfa-secret"}
    _, diags = validate_connector_text(as_yaml(doc))
    for d in diags:
        assert d.message.startswith("`spec.") and "hunter2" not in d.message
    assert get_at(doc, "/spec/mfa/client_secret") == "hunter2-mfa-secret"
