"""Connector URLs are parsed as strictly as Go's net/url parses them (Teleport reads them so), must
be https except on a loopback host, and the file-ish fields take only what Teleport reads."""

from __future__ import annotations

import pytest

from bot.connectors.validate import validate_connector_text
from tests.support.connectors_support import as_yaml, oidc_doc, saml_doc

REFUSED = [
    "https://%zz", "https://example.com/a%2", "https://example.com/a%g0", "https://example.com/#%zz",
    "https://exa mple.com/", "https://exa\tmple.com/", "https://example.com/\n", "https://example.com/\x7f",
    "https://ex%41mple.com/", "https://example{.com/", "https://example.com:80x/", "https://example.com:port/",
    "https://example.com:80:80/", "https://::1/", "https://[::1/", "https://[not-an-ip]/",
    "https://us er@example.com/", "https://user%zz@example.com/", "://example.com", "https:example.com",
    "https://", "https://:443/", "example.com", "/v1/callback", "ftp://example.com/",
]
ACCEPTED = [
    "https://example.com:8443/a%20b?q=%zz",  # Go keeps the query raw
    "https://example.com/a b",  # Go takes a space in the path
    "https://user:p%40ss@example.com/", "https://[2001:db8::1]:8443/cb", "https://bücher.example/",
    "https://example.com:/", "HTTPS://Example.COM/cb", "https://example.com/#frag%20ment",
    "http://localhost:8080/cb", "http://127.0.0.2/cb", "http://[::1]:3000/cb",
]


def _errors(doc: dict) -> list[tuple[str, str]]:
    return [(d.code, d.pointer) for d in validate_connector_text(as_yaml(doc))[1]]


@pytest.mark.parametrize("url", REFUSED)
def test_oidc_urls_go_refuses_are_format_errors(url):
    doc = oidc_doc()
    doc["spec"]["issuer_url"] = url
    doc["spec"]["redirect_url"] = [url]
    assert _errors(doc) == [("format", "/spec/issuer_url"), ("format", "/spec/redirect_url/0")]


@pytest.mark.parametrize("url", ACCEPTED)
def test_oidc_urls_go_accepts_pass(url):
    doc = oidc_doc()
    doc["spec"]["issuer_url"] = url
    doc["spec"]["redirect_url"] = [url]
    assert _errors(doc) == []


def test_an_invalid_escape_is_named_with_its_field_and_line():
    doc = oidc_doc()
    doc["spec"]["issuer_url"] = "https://%zz"
    text = as_yaml(doc)
    [diag] = validate_connector_text(text)[1]
    assert diag.line == next(n for n, line in enumerate(text.splitlines(), 1) if "%zz" in line)
    assert diag.message.startswith("`spec.issuer_url` is not a valid URL") and "'%zz'" in diag.message


@pytest.mark.parametrize("field", ["acs", "sso", "single_logout_url", "entity_descriptor_url"])
def test_saml_urls_are_https_except_on_loopback(field):
    doc = saml_doc()
    doc["spec"][field] = "http://idp.example.com/x"
    assert _errors(doc) == [("not-https", f"/spec/{field}")]
    doc["spec"][field] = "http://localhost:8080/saml/acs/okta-saml"
    assert _errors(doc) == []
    doc["spec"][field] = "https://idp.example.com/%zz"
    assert _errors(doc) == [("format", f"/spec/{field}")]


def test_http_on_a_name_that_only_starts_like_localhost_is_refused():
    doc = oidc_doc()
    doc["spec"]["redirect_url"] = ["http://localhost.example.com/cb", "http://128.0.0.1/cb"]
    assert _errors(doc) == [("not-https", "/spec/redirect_url/0"), ("not-https", "/spec/redirect_url/1")]


@pytest.mark.parametrize("pointer", ["/spec/client_secret", "/spec/mfa/client_secret"])
@pytest.mark.parametrize("value", ["file:///etc/reviewer/client-secret", "FILE://secret.txt"])
def test_a_literal_secret_that_looks_like_a_file_url_is_refused(pointer, value):
    doc = oidc_doc()
    doc["spec"]["mfa"] = {"client_id": "m", "client_secret": "s"}
    doc["spec"][pointer.split("/")[2]] = value if pointer == "/spec/client_secret" else {"client_secret": value}
    _, diags = validate_connector_text(as_yaml(doc))
    assert [(d.code, d.pointer) for d in diags] == [("secret-reference", pointer)]
    assert "secret://NAME/KEY" in diags[0].message and "file://" in diags[0].message


@pytest.mark.parametrize("uri, expected", [
    ("/etc/reviewer/sa.json", []), ("sa.json", []), ("file:///etc/reviewer/sa.json", []),
    ("gs://bucket/sa.json", [("format", "/spec/cloud_service_account_uri")]),
    ("https://example.com/sa.json", [("format", "/spec/cloud_service_account_uri")]),
    ("file://", [("format", "/spec/cloud_service_account_uri")]),
    ("/etc/%zz.json", [("format", "/spec/cloud_service_account_uri")]),
])
def test_the_service_account_uri_is_a_path_or_a_file_uri(uri, expected):
    doc = oidc_doc()
    doc["spec"].update(cloud_service_account_uri=uri, cloud_admin_email="admin@example.com")
    assert _errors(doc) == expected
