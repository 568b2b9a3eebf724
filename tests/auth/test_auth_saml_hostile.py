"""Hostile SAML responses: mutated copies of the real IdP's responses (pysaml2's, signed by xmlsec1),
each posted to the assertion consumer and each refused with the check that failed — and no session.

Edits inside the signed assertion are either left unsigned (the signature must then fail) or signed
again with the IdP's own key (`resign`), so that it is our own check — audience, recipient, time... —
that refuses them, not the broken signature.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from tests.auth.test_auth_saml import ADMIN_YAML
from tests.support.oidc_support import Browser, signin_server
from tests.support.saml_support import (
    SamlIdP,
    decode,
    encode,
    make_pair,
    post_response,
    put_saml,
    resign,
    start,
)

pytestmark = pytest.mark.usefixtures("xmlsec")


@dataclass
class Scene:
    idp: SamlIdP
    server: object
    browser: Browser

    async def real_response(self) -> tuple[str, str]:
        """A fresh sign-in's ACS URL and the IdP's real response XML (not posted)."""
        acs, response = await start(self.browser, self.server, "corp")
        return acs, decode(response)

    async def refused(self, acs: str, xml: str, *checks: str, status: int = 403) -> None:
        got, _, page = await post_response(self.browser, acs, encode(xml))
        assert got == status, page[:500]
        assert any(f"<code>{check}</code>" in page for check in checks), page[:800]
        assert self.browser.cookie("reviewer_session") is None


@asynccontextmanager
async def scene(tmp_path, **spec) -> AsyncIterator[Scene]:
    idp = SamlIdP()
    async with idp.serving(), signin_server(tmp_path, ADMIN_YAML) as server:
        await put_saml(server, idp.connector("corp", server.url, **spec), idp)
        browser = Browser()
        try:
            yield Scene(idp, server, browser)
        finally:
            await browser.close()


def _evil(assertion: str) -> str:
    """An unsigned copy of the assertion for mallory, with its own ID."""
    copy = re.sub(r"<ns2:Signature .*?</ns2:Signature>", "", assertion, flags=re.S)
    copy = copy.replace("alice@example.com", "mallory@example.com")
    return re.sub(r'ID="[^"]+"', 'ID="id-evil"', copy, count=1)


def _assertion(xml: str) -> str:
    found = re.search(r"<ns1:Assertion .*?</ns1:Assertion>", xml, flags=re.S)
    assert found
    return found.group(0)


async def test_a_response_signed_nowhere_is_refused(tmp_path):
    async with scene(tmp_path) as s:
        s.idp.sign_assertion = False
        acs, xml = await s.real_response()
        await s.refused(acs, xml, "saml-signature")


async def test_a_response_signed_by_another_key_is_refused(tmp_path):
    async with scene(tmp_path) as s:
        s.idp.forger = make_pair("test idp", "forger")
        acs, xml = await s.real_response()
        await s.refused(acs, xml, "saml-signature")


async def test_an_edited_signed_name_id_is_refused(tmp_path):
    async with scene(tmp_path) as s:
        acs, xml = await s.real_response()
        await s.refused(acs, xml.replace(">alice@example.com<", ">mallory@example.com<"), "saml-signature")


@pytest.mark.parametrize("variant", ["evil-first", "evil-last", "signed-inside-evil", "evil-same-id",
                                     "signed-in-extensions"])
async def test_signature_wrapping_is_refused(tmp_path, variant):
    async with scene(tmp_path) as s:
        acs, xml = await s.real_response()
        signed = _assertion(xml)
        evil = _evil(signed)
        if variant == "evil-first":
            wrapped = xml.replace(signed, evil + signed)
        elif variant == "evil-last":
            wrapped = xml.replace(signed, signed + evil)
        elif variant == "signed-inside-evil":
            wrapped = xml.replace(signed, evil.replace("</ns1:Subject>", "</ns1:Subject>" + signed, 1))
        elif variant == "evil-same-id":
            original_id = re.search(r'ID="([^"]+)"', signed).group(1)
            wrapped = xml.replace(signed, evil.replace('ID="id-evil"', f'ID="{original_id}"') + signed)
        else:
            wrapped = xml.replace(signed, evil).replace(  # Extensions come before Status
                "<ns0:Status>", f"<ns0:Extensions>{signed}</ns0:Extensions><ns0:Status>", 1)
        await s.refused(acs, wrapped, "saml-signature", "saml-assertion")


async def test_a_comment_in_the_name_id_is_refused(tmp_path):
    async with scene(tmp_path) as s:
        s.idp.user = "alice@example.com.evil.test"
        acs, xml = await s.real_response()
        commented = xml.replace(">alice@example.com.evil.test<", ">alice@example.com<!---->.evil.test<")
        await s.refused(acs, commented, "xml-comment")


def _iso(delta: timedelta) -> str:
    return (datetime.now(UTC) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("edit", "check"), [
    (lambda x: re.sub(r"<ns1:Audience>[^<]*</ns1:Audience>", "<ns1:Audience>https://other.example/sp</ns1:Audience>",
                      x), "saml-audience"),
    (lambda x: re.sub(r'Recipient="[^"]+"', 'Recipient="https://other.example/acs"', x), "saml-recipient"),
    (lambda x: re.sub(r'(<ns1:Conditions [^>]*)NotOnOrAfter="[^"]+"',
                      lambda m: m.group(1) + f'NotOnOrAfter="{_iso(timedelta(minutes=-3))}"', x), "saml-time"),
    (lambda x: re.sub(r'(<ns1:Conditions [^>]*)NotBefore="[^"]+"',
                      lambda m: m.group(1) + f'NotBefore="{_iso(timedelta(minutes=3))}"', x), "saml-time"),
])
async def test_resigned_assertions_failing_our_checks_are_refused(tmp_path, edit, check):
    async with scene(tmp_path) as s:
        acs, xml = await s.real_response()
        edited = edit(xml)
        assert edited != xml
        await s.refused(acs, resign(s.idp, edited), check)


async def test_a_resigned_assertion_from_another_issuer_is_refused(tmp_path):
    async with scene(tmp_path) as s:
        acs, xml = await s.real_response()
        edited = xml.replace(f">{s.idp.entity_id}</ns1:Issuer>", ">https://other-idp.example</ns1:Issuer>")
        await s.refused(acs, resign(s.idp, edited), "saml-issuer", "saml-signature")


async def test_a_wrong_destination_is_refused(tmp_path):
    async with scene(tmp_path) as s:
        acs, xml = await s.real_response()
        edited = re.sub(r'Destination="[^"]+"', 'Destination="https://other.example/acs"', xml, count=1)
        await s.refused(acs, edited, "saml-destination")


async def test_an_unknown_in_response_to_is_refused(tmp_path):
    async with scene(tmp_path) as s:
        acs, xml = await s.real_response()
        edited = re.sub(r'InResponseTo="[^"]+"', 'InResponseTo="id-never-sent"', xml, count=1)
        await s.refused(acs, edited, "saml-in-response-to")


async def test_a_response_is_used_once(tmp_path):
    async with scene(tmp_path) as s:
        acs, xml = await s.real_response()
        status, url, _ = await post_response(s.browser, acs, encode(xml))
        assert url.endswith("/console/repos")
        s.browser.http.cookie_jar.clear()
        await s.refused(acs, xml, "saml-in-response-to")


async def test_idp_initiated_is_refused_unless_allowed(tmp_path):
    async with scene(tmp_path) as s:
        acs = f"{s.server.url}/v1/webapi/saml/acs/corp"
        xml = s.idp.response_xml(acs, None, f"{s.server.url}/sp")
        await s.refused(acs, xml, "idp-initiated")


async def test_an_allowed_idp_initiated_assertion_is_never_accepted_twice(tmp_path):
    async with scene(tmp_path, allow_idp_initiated=True) as s:
        acs = f"{s.server.url}/v1/webapi/saml/acs/corp"
        xml = s.idp.response_xml(acs, None, f"{s.server.url}/sp")
        status, url, _ = await post_response(s.browser, acs, encode(xml))
        assert url == s.server.url + "/console/", (status, url)
        assert s.browser.cookie("reviewer_session")
        s.browser.http.cookie_jar.clear()
        await s.refused(acs, xml, "saml-replay")


async def test_a_response_posted_to_another_connectors_acs_is_refused(tmp_path):
    async with scene(tmp_path) as s:
        await put_saml(s.server, s.idp.connector("second", s.server.url))
        acs, xml = await s.real_response()
        await s.refused(acs.replace("/acs/corp", "/acs/second"), xml, "saml-in-response-to")
