"""Hostile connector values: patterns and XML built to crash a parser, descriptors with gaps.

Each must come back as a diagnostic at its field (pointer and line), through `reviewer validate`'s
library entry point and through the resource API (where a crash would be a 500).
"""

from __future__ import annotations

import pytest

from bot.connectors.validate import validate_connector_text
from tests.support.connectors_support import SAML_PATH, ApiServer, as_yaml, descriptor, key_pair, oidc_doc, saml_doc

DEEP = "^" + "(" * 5000 + "a" + ")" * 5000 + "$"
HUGE_REPEAT = "^a{99999999999999999999}$"
BACKREFERENCE = r"^(a)\1$"  # Python's re takes it; Go's regexp (Teleport) does not

REGEX_FIELDS = [
    ("/spec/user_matchers", ["{}"], "/spec/user_matchers/0"),
    ("/spec/client_redirect_settings", {"allowed_https_hostnames": ["{}"]},
     "/spec/client_redirect_settings/allowed_https_hostnames/0"),
    ("/spec/claims_to_roles", [{"claim": "groups", "value": "{}", "roles": ["r"]}], "/spec/claims_to_roles/0/value"),
]


def _diagnostics(doc: dict):
    text = as_yaml(doc)
    return text, validate_connector_text(text)[1]


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("pattern", [DEEP, HUGE_REPEAT, BACKREFERENCE, "^(?=a)$", "^a{1001}$"])
@pytest.mark.parametrize("field,template,pointer", REGEX_FIELDS)
def test_a_hostile_pattern_is_an_invalid_regex_at_its_field(pattern, field, template, pointer):
    doc = oidc_doc()
    doc["spec"][field.rsplit("/", 1)[1]] = _fill(template, pattern)
    text, diags = _diagnostics(doc)
    assert [(d.code, d.pointer) for d in diags] == [("invalid-regex", pointer)]
    assert diags[0].line == _line_of(text, pattern[:4]) and diags[0].line > 1
    assert diags[0].message.startswith("`spec.") and "does not compile" in diags[0].message


def test_patterns_go_accepts_pass():
    doc = oidc_doc()
    doc["spec"]["user_matchers"] = ["^(a|(b|(c)))+$", "^[()]*$", r"^\(\($", "alice*", "^a{1000}$"]
    assert _diagnostics(doc)[1] == []


def _fill(template, pattern):
    if isinstance(template, list):
        return [_fill(item, pattern) for item in template]
    if isinstance(template, dict):
        return {k: _fill(v, pattern) for k, v in template.items()}
    return pattern if template == "{}" else template


def _saml_with_descriptor(xml: str, **explicit: str) -> dict:
    doc = saml_doc()
    for name in ("issuer", "sso", "cert"):
        del doc["spec"][name]
    doc["spec"]["entity_descriptor"] = xml
    doc["spec"].update(explicit)
    return doc


@pytest.mark.parametrize("encoding", ["UTF-7", "x-no-such-encoding", "latin-1", "UTF-16"])
def test_a_descriptor_declaring_another_encoding_is_invalid_xml(encoding):
    xml = descriptor().replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
    text, diags = _diagnostics(_saml_with_descriptor(xml))
    assert [(d.code, d.pointer) for d in diags] == [("invalid-xml", "/spec/entity_descriptor")]
    assert encoding in diags[0].message and "UTF-8" in diags[0].message
    assert diags[0].line == _line_of(text, '"entity_descriptor"')


@pytest.mark.parametrize("declaration", ['<?xml version="1.0" encoding="UTF-8"?>', "<?xml version='1.0' encoding='utf-8'?>"])
def test_a_descriptor_declaring_utf8_passes(declaration):
    xml = descriptor().replace('<?xml version="1.0"?>', declaration)
    assert _diagnostics(_saml_with_descriptor(xml))[1] == []


NO_IDP = '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com"/>'
NO_SSO = descriptor().replace('<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" '
                              'Location="https://idp.example.com/sso"/>', "")


@pytest.mark.parametrize("xml,explicit,missing", [
    (NO_IDP, {}, ["sso", "cert"]),
    (NO_IDP, {"sso": "https://idp.example.com/sso"}, ["cert"]),
    (NO_IDP, {"cert": key_pair()[0]}, ["sso"]),
    (NO_SSO, {}, ["sso"]),
    (descriptor(entity_id=""), {}, ["issuer"]),
])
def test_a_descriptor_gap_is_a_missing_field_only_when_no_field_fills_it(xml, explicit, missing):
    _, diags = _diagnostics(_saml_with_descriptor(xml, **explicit))
    assert [(d.code, d.pointer) for d in diags] == [("required", "/spec")] * len(missing)
    for name, diag in zip(missing, diags, strict=True):
        assert f"needs `{name}`" in diag.message
    if xml is NO_IDP:
        assert "IDPSSODescriptor" in diags[0].message


@pytest.mark.parametrize("xml,explicit", [
    (NO_IDP, {"sso": "https://idp.example.com/sso", "cert": key_pair()[0]}),
    (NO_SSO, {"sso": "https://idp.example.com/sso"}),
    (descriptor(entity_id=""), {"issuer": "https://idp.example.com"}),
])
def test_explicit_fields_fill_what_the_descriptor_lacks(xml, explicit):
    assert _diagnostics(_saml_with_descriptor(xml, **explicit))[1] == []


async def test_the_api_reports_hostile_values_in_status_not_a_500(tmp_path):
    doc = saml_doc()
    doc["spec"]["user_matchers"] = [DEEP]
    doc["spec"]["mfa"] = {"entity_descriptor": descriptor().replace('version="1.0"', 'version="1.0" encoding="UTF-7"')}
    async with ApiServer(str(tmp_path / "db")) as server:
        status, body = await server.put(SAML_PATH, doc)
    assert status in (200, 201)
    reconciled = next(c for c in body["status"]["conditions"] if c["type"] == "SuccessfullyReconciled")
    assert reconciled["status"] == "False"
    assert "spec.user_matchers[0]" in reconciled["message"] and "spec.mfa.entity_descriptor" in reconciled["message"]
