"""`entity_descriptor_url` is fetched when a SAML connector is reconciled (PUT), checked as an
inline `entity_descriptor` is, and every failure lands in `SuccessfullyReconciled`.

The IdP is pysaml2's (tests/support/saml_support.py), serving its real metadata over local HTTP; the
broken ones are a 404, an oversize document, an XXE document, a server that never answers and a
document without an IDPSSODescriptor. Sign-in then uses the document the reconcile step kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from bot.connectors.descriptor_fetch import DescriptorSource
from tests.support.connectors_support import SAML_PATH, ApiServer
from tests.support.oidc_support import Browser, signin_server
from tests.support.saml_support import SamlIdP, post_response, put_saml, require_xmlsec, start

NO_IDP = ('<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.example.com">'
          '<md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/>'
          '</md:EntityDescriptor>')
XXE = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
       '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="&x;"/>')


def _by_url(idp: SamlIdP, path: str = "/metadata") -> dict:
    """A connector whose IdP comes from its descriptor URL alone (no issuer, sso or cert)."""
    doc = idp.connector("corp", "https://reviewer.example.com", entity_descriptor_url=idp.url + path)
    for field in ("issuer", "sso", "cert"):
        del doc["spec"][field]
    return doc


def _reconciled(obj: dict) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == "SuccessfullyReconciled")


async def _put(tmp_path, doc: dict, source: DescriptorSource | None = None) -> dict:
    async with ApiServer(str(tmp_path / "reviewer.db"), descriptors=source) as api:
        status, obj = await api.put(SAML_PATH, doc)
    assert status == 201, obj
    return _reconciled(obj)


async def test_a_real_idp_metadata_document_reconciles(tmp_path):
    require_xmlsec()  # pysaml2 writes the IdP's metadata only where it finds xmlsec1
    idp = SamlIdP()
    async with idp.serving():
        condition = await _put(tmp_path, _by_url(idp))
    assert (condition["status"], condition["reason"]) == ("True", "NoError"), condition


@pytest.mark.parametrize("override,path,expected", [
    (None, "/missing", "it answered HTTP 404"),
    ("<x>" + "a" * (1024 * 1024) + "</x>", "/metadata", "the document is larger than 1024 KB"),
    (XXE, "/metadata", "declares a DTD or entities"),
])
async def test_a_bad_document_url_fails_reconcile(tmp_path, override, path, expected):
    idp = SamlIdP(metadata_override=override)
    async with idp.serving():
        condition = await _put(tmp_path, _by_url(idp, path))
    assert (condition["status"], condition["reason"]) == ("False", "ValidationFailed"), condition
    message = condition["message"]
    assert message.startswith("1 problem: `spec.entity_descriptor_url`"), message
    assert idp.url + path in message and expected in message and "set `entity_descriptor`" in message
    assert "root:" not in message  # the external entity was never read


async def test_a_document_without_an_idp_reports_the_missing_fields(tmp_path):
    idp = SamlIdP(metadata_override=NO_IDP)
    async with idp.serving():
        condition = await _put(tmp_path, _by_url(idp))
    assert (condition["status"], condition["reason"]) == ("False", "ValidationFailed"), condition
    message = condition["message"]
    assert message.startswith("2 problems: `spec` needs `sso`"), message
    assert f"the entity descriptor at {idp.url}/metadata (it has no IDPSSODescriptor)" in message
    assert "needs `cert`" in message


@asynccontextmanager
async def _silent_server() -> AsyncIterator[str]:
    """A server that accepts connections and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def accept(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/metadata"
    finally:
        for writer in held:
            writer.close()
        server.close()


async def test_a_server_that_never_answers_times_out_into_the_condition(tmp_path):
    idp = SamlIdP()
    async with _silent_server() as url:
        doc = _by_url(idp)
        doc["spec"]["entity_descriptor_url"] = url
        condition = await _put(tmp_path, doc, DescriptorSource(timeout=0.2))
    assert (condition["status"], condition["reason"]) == ("False", "ValidationFailed"), condition
    assert url in condition["message"] and "no answer within 0.2 seconds" in condition["message"]


async def test_an_mfa_descriptor_url_is_fetched_too(tmp_path):
    idp = SamlIdP()
    async with idp.serving():
        doc = idp.connector("corp", "https://reviewer.example.com",
                            mfa={"enabled": True, "entity_descriptor_url": idp.url + "/gone"})
        condition = await _put(tmp_path, doc)
    assert condition["status"] == "False", condition
    assert condition["message"].startswith("1 problem: `spec.mfa.entity_descriptor_url` cannot be fetched")
    assert "HTTP 404" in condition["message"]


async def test_sign_in_uses_the_document_the_reconcile_kept(tmp_path, saml_idp):
    require_xmlsec()
    idp = saml_idp
    async with signin_server(tmp_path) as server:
        doc = idp.connector("corp", server.url, entity_descriptor_url=idp.url + "/metadata")
        for field in ("issuer", "sso", "cert"):
            del doc["spec"][field]
        await put_saml(server, doc, idp)  # asserts SuccessfullyReconciled is True
        idp.metadata_override = "<broken"  # sign-in within the hour reads the kept document
        browser = Browser()
        try:
            acs, response = await start(browser, server, "corp")
            _, landed, _ = await post_response(browser, acs, response)
            async with browser.http.get(server.url + "/v1/webapi/session") as answer:
                assert answer.status == 200 and (await answer.json())["username"] == "alice@example.com"
        finally:
            await browser.close()
        assert landed == server.url + "/console/repos", landed


async def test_a_redirect_is_not_followed(tmp_path):
    """A descriptor URL that redirects (to a real document) is refused, never followed elsewhere."""
    idp = SamlIdP()
    async with idp.serving():
        async def redirect(_: web.Request) -> web.Response:
            raise web.HTTPFound(idp.url + "/metadata")

        app = web.Application()
        app.router.add_get("/metadata", redirect)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        try:
            doc = _by_url(idp)
            doc["spec"]["entity_descriptor_url"] = f"http://127.0.0.1:{runner.addresses[0][1]}/metadata"
            condition = await _put(tmp_path, doc)
        finally:
            await runner.cleanup()
    assert condition["status"] == "False" and "it answered HTTP 302" in condition["message"], condition
