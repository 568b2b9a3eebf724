"""A real SAML identity provider for the sign-in tests: pysaml2's IdP (`saml2.server.Server`), served
over HTTP on 127.0.0.1, signing (and, when asked, encrypting) real responses with xmlsec1.

The IdP trusts the SP metadata the server publishes (`GET /v1/webapi/saml/metadata/{name}`), so the
tests also prove that what an administrator gives an IdP works. A test may make the IdP answer as
another user, leave signatures out, or sign with another key; `responses` keeps every response it
sent, the raw XML the attack tests mutate. It signs with RSA-SHA256 and SHA-256 digests, as a
current IdP does; `sign_alg`/`digest_alg` make it sign with SHA-1 instead (the hostile tests), and
`authn_instant` backdates the authentication its assertions report.
"""

from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import html
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT, sigver
from saml2.config import IdPConfig
from saml2.metadata import create_metadata_string
from saml2.saml import NAMEID_FORMAT_UNSPECIFIED, NameID
from saml2.server import Server as IdPServer
from saml2.xmldsig import DIGEST_SHA256, SIG_RSA_SHA256

from tests.support.oidc_support import ADMIN_TOKEN, Browser

SAML_PATH = "/apis/resources.service.dev/v2/samlconnectors"


def require_xmlsec() -> None:
    """Skips (saying why) without the xmlsec1 binary, unless CI demands it."""
    if shutil.which("xmlsec1") is None:
        if os.environ.get("REVIEWER_TEST_REQUIRE_XMLSEC") == "1":
            pytest.fail("xmlsec1 is not installed and REVIEWER_TEST_REQUIRE_XMLSEC=1")
        pytest.skip("the SAML tests need Debian's xmlsec1 binary (apt-get install xmlsec1)")


@dataclass(frozen=True)
class KeyPairFiles:
    key_pem: str
    cert_pem: str


@functools.cache
def make_pair(common_name: str, label: str = "") -> KeyPairFiles:
    """A key and its self-signed certificate, one a (name, label) for the whole run: making a key
    costs 0.1 to 0.4 s of CPU, and every IdP double and SP made one. A key that must differ from
    another of the same name (a forger's) gets a label of its own."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30)).sign(key, hashes.SHA256()))
    return KeyPairFiles(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                          serialization.NoEncryption()).decode(),
        cert.public_bytes(serialization.Encoding.PEM).decode())


@functools.cache
def _private_key(pem: bytes) -> Any:
    return serialization.load_pem_private_key(pem, None)


@contextmanager
def _keys_read_once() -> Iterator[None]:
    """pysaml2 reads and checks the IdP's RSA key twice each time the double makes a server for a new
    configuration (each test's double has its own URL): 52 ms of CPU a time, about 11 s a run. The
    double's few keys are read once a process instead; a key object is immutable, so the servers
    sign exactly as before. Only while the double makes its server: the app's own SAML client reads
    its keys as it always does."""
    original = sigver.import_rsa_key_from_file
    sigver.import_rsa_key_from_file = lambda filename: _private_key(Path(filename).read_bytes())
    try:
        yield
    finally:
        sigver.import_rsa_key_from_file = original


@dataclass
class SamlIdP:
    """pysaml2's IdP. Per test: `user`, `attributes`, and how to answer (`sign_response`,
    `sign_assertion`, `encrypt`, `key`: another key pair signs, as a forger would)."""

    pair: KeyPairFiles = field(default_factory=lambda: make_pair("test idp"))
    user: str = "alice@example.com"
    attributes: dict[str, list[str]] = field(default_factory=lambda: {"groups": ["admins"]})
    sign_response: bool = False
    sign_assertion: bool = True
    encrypt: bool = False
    forger: KeyPairFiles | None = None
    url: str = ""
    requests: list[Any] = field(default_factory=list)  # parsed AuthnRequests
    raw_requests: list[dict[str, str]] = field(default_factory=list)
    responses: list[str] = field(default_factory=list)  # XML sent
    sp_metadata: str = ""
    want_signed_requests: bool = False
    metadata_override: str | None = None  # what GET /metadata serves instead of the real descriptor
    logout_requests: list[Any] = field(default_factory=list)  # parsed LogoutRequests (their signature checked)
    sign_alg: str = SIG_RSA_SHA256  # responses, assertions and redirect-binding messages
    digest_alg: str = DIGEST_SHA256
    authn_instant: float | None = None  # seconds since the epoch; None: now
    _dir: str = ""
    _servers: dict[tuple, IdPServer] = field(default_factory=dict, repr=False)  # see _server

    @property
    def entity_id(self) -> str:
        return self.url + "/idp"

    def connector(self, name: str, server_url: str, **spec: Any) -> dict:
        body = {"acs": f"{server_url}/v1/webapi/saml/acs/{name}", "audience": f"{server_url}/sp",
                "service_provider_issuer": f"{server_url}/sp", "issuer": self.entity_id,
                "sso": self.url + "/sso", "cert": self.pair.cert_pem,
                "attributes_to_roles": [{"name": "groups", "value": "admins", "roles": ["admin"]}], **spec}
        return {"apiVersion": "resources.service.dev/v2", "kind": "ServiceSAMLConnector",
                "metadata": {"name": name}, "spec": body}

    def _file(self, name: str, text: str) -> str:
        path = Path(self._dir) / name
        path.write_text(text)
        return str(path)

    def _server(self) -> IdPServer:
        """pysaml2's IdP as the double is now configured, made once for each configuration (its key
        pair, URL, the SP metadata it trusts, whether it wants signed requests): making one loads
        and checks its RSA key and reads the metadata, about 50 ms of CPU, and one sign-in asks
        for it several times. The answers are unchanged: they depend on nothing it keeps between
        requests (the NameID is always given), and the signing algorithms are set at each use."""
        pair = self.forger or self.pair
        key = (pair, self.url, self._dir, self.sp_metadata, self.want_signed_requests)
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = self._new_server(pair)
        server.signing_algorithm, server.digest_algorithm = self.sign_alg, self.digest_alg  # (config's are unread)
        return server

    def _new_server(self, pair: KeyPairFiles) -> IdPServer:
        name = hashlib.sha256(pair.key_pem.encode()).hexdigest()[:16]  # a forger's files beside the IdP's own
        config = {
            "entityid": self.entity_id,
            "key_file": self._file(f"{name}.key", pair.key_pem), "cert_file": self._file(f"{name}.crt", pair.cert_pem),
            "metadata": {"inline": [self.sp_metadata]} if self.sp_metadata else {},
            "accepted_time_diff": 60,
            "service": {"idp": {
                "endpoints": {"single_sign_on_service": [(self.url + "/sso", BINDING_HTTP_REDIRECT),
                                                         (self.url + "/sso", BINDING_HTTP_POST)],
                              "single_logout_service": [(self.url + "/slo", BINDING_HTTP_REDIRECT)]},
                "want_authn_requests_signed": self.want_signed_requests,
                "policy": {"default": {"lifetime": {"minutes": 5}, "attribute_restrictions": None,
                                       "name_form": "urn:oasis:names:tc:SAML:2.0:attrname-format:unspecified"}},
            }},
        }
        with _keys_read_once():  # the config's metadata store reads the key, and the server again
            idp_config = IdPConfig()
            idp_config.load(config)
            return IdPServer(config=idp_config)

    async def sso(self, request: web.Request) -> web.Response:
        if request.method == "POST":
            form = {k: str(v) for k, v in (await request.post()).items()}
            binding = BINDING_HTTP_POST
        else:
            form = dict(request.query)
            binding = BINDING_HTTP_REDIRECT
        self.raw_requests.append(form)
        server = self._server()
        parsed = server.parse_authn_request(form["SAMLRequest"], binding, relay_state=form.get("RelayState"),
                                            sigalg=form.get("SigAlg"), signature=form.get("Signature"))
        self.requests.append(parsed)
        message = parsed.message
        return self.answer(message.assertion_consumer_service_url, message.id, message.issuer.text,
                           form.get("RelayState", ""))

    def response_xml(self, acs: str, in_response_to: str | None, audience: str) -> str:
        server = self._server()
        extra: dict[str, Any] = {}
        if self.encrypt:
            sp_cert = re.search(r"<(?:\w+:)?X509Certificate>([^<]+)</(?:\w+:)?X509Certificate>",
                                self.sp_metadata.split("use=\"encryption\"", 1)[-1])
            assert sp_cert, "the SP metadata carries no encryption certificate"
            extra = {"encrypt_assertion": True, "encrypt_cert_assertion": sp_cert.group(1),
                     "encrypt_assertion_self_contained": True}
        response = server.create_authn_response(
            dict(self.attributes), in_response_to, acs, audience,
            name_id=NameID(format=NAMEID_FORMAT_UNSPECIFIED, text=self.user),
            authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:Password",
                   **({"authn_instant": self.authn_instant} if self.authn_instant is not None else {})},
            sign_response=self.sign_response, sign_assertion=self.sign_assertion, **extra)
        xml = str(response)
        self.responses.append(xml)
        return xml

    def answer(self, acs: str, in_response_to: str | None, audience: str, relay_state: str = "") -> web.Response:
        xml = self.response_xml(acs, in_response_to, audience)
        return form_page(acs, {"SAMLResponse": base64.b64encode(xml.encode()).decode(), "RelayState": relay_state})

    async def metadata(self, request: web.Request) -> web.Response:
        """The IdP's own metadata (pysaml2 writes it: entityID, SSO endpoints, signing certificate)."""
        if self.metadata_override is not None:
            return web.Response(text=self.metadata_override, content_type="application/samlmetadata+xml")
        text = create_metadata_string(None, config=self._server().config, valid=None, sign=False)
        return web.Response(body=text, content_type="application/samlmetadata+xml")

    async def slo(self, request: web.Request) -> web.Response:
        """The SP's LogoutRequest (its redirect signature checked), answered with a signed LogoutResponse."""
        server = self._server()
        query = dict(request.query)
        parsed = server.parse_logout_request(query["SAMLRequest"], BINDING_HTTP_REDIRECT,
                                             relay_state=query.get("RelayState"), sigalg=query.get("SigAlg"),
                                             signature=query.get("Signature"))
        self.logout_requests.append(parsed.message)
        response = server.create_logout_response(parsed.message, [BINDING_HTTP_REDIRECT])
        destination = re.search(r'SingleLogoutService Binding="[^"]+HTTP-Redirect" Location="([^"]+)"',
                                self.sp_metadata)
        assert destination, "the SP metadata has no SingleLogoutService"
        info = server.apply_binding(BINDING_HTTP_REDIRECT, str(response), destination.group(1), response=True,
                                    sign=True)
        raise web.HTTPFound(dict(info["headers"])["Location"])

    def logout_request_url(self, destination: str, name_id: str, sign: bool = True) -> str:
        """An IdP-initiated LogoutRequest to the SP, signed on the redirect binding unless told not to."""
        server = self._server()
        sp_entity = re.search(r'entityID="([^"]+)"', self.sp_metadata).group(1)
        _, request = server.create_logout_request(destination, sp_entity, name_id=NameID(
            format=NAMEID_FORMAT_UNSPECIFIED, text=name_id), sign=False)
        info = server.apply_binding(BINDING_HTTP_REDIRECT, str(request), destination, sign=sign)
        return str(dict(info["headers"])["Location"])

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[SamlIdP]:
        self._dir = tempfile.mkdtemp(prefix="saml-idp-")
        app = web.Application()
        app.router.add_route("*", "/sso", self.sso)
        app.router.add_get("/slo", self.slo)
        app.router.add_get("/metadata", self.metadata)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            yield self
        finally:
            await runner.cleanup()
            shutil.rmtree(self._dir, ignore_errors=True)


def form_page(action: str, fields: dict[str, str]) -> web.Response:
    inputs = "".join(f'<input type="hidden" name="{k}" value="{html.escape(v)}">' for k, v in fields.items())
    return web.Response(text=f'<form method="post" action="{html.escape(action)}">{inputs}</form>',
                        content_type="text/html")


def read_form(page: str) -> tuple[str, dict[str, str]]:
    """The action and fields of an auto-submitting form page."""
    action = re.search(r'<form method="post" action="([^"]+)"', page)
    assert action, page[:500]
    fields = {m.group(1): html.unescape(m.group(2))
              for m in re.finditer(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page)}
    return html.unescape(action.group(1)), fields


async def put_saml(server: Any, doc: dict, idp: SamlIdP | None = None) -> None:
    url = f"{server.url}{SAML_PATH}/{doc['metadata']['name']}"
    async with server.http.put(url, json=doc, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as response:
        body = await response.json()
        assert response.status in (200, 201), body
    ready = [c for c in body["status"]["conditions"] if c["type"] == "SuccessfullyReconciled"]
    assert ready[0]["status"] == "True", ready
    if idp is not None:
        async with server.http.get(f"{server.url}/v1/webapi/saml/metadata/{doc['metadata']['name']}") as response:
            assert response.status == 200
            idp.sp_metadata = await response.text()


async def start(browser: Browser, server: Any, name: str, redirect: str = "/console/repos") -> tuple[str, str]:
    """Starts a web sign-in and lets the IdP answer; returns the ACS URL and the SAMLResponse
    the IdP's page would post (not yet posted)."""
    status, url, page = await browser.get(f"{server.url}/v1/webapi/saml/sso?connector_id={name}"
                                          f"&redirect_url={redirect}")
    assert status == 200, (status, page[:300])
    action, fields = read_form(page)
    if action.startswith(server.url):
        return action, fields["SAMLResponse"]
    status, url, page = await browser.follow("POST", action, data=fields)  # the POST binding's form
    action, fields = read_form(page)
    return action, fields["SAMLResponse"]


async def post_response(browser: Browser, acs: str, saml_response: str) -> tuple[int, str, str]:
    return await browser.follow("POST", acs, data={"SAMLResponse": saml_response})


def encode(xml: str) -> str:
    return base64.b64encode(xml.encode()).decode()


def decode(saml_response: str) -> str:
    return base64.b64decode(saml_response).decode()


ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion:Assertion"


def resign(idp: SamlIdP, xml: str) -> str:
    """The IdP's own signature made again over an edited assertion (its Signature element kept as the
    template): a response the IdP could really have sent, so the SP's own checks are what refuses it."""
    server = idp._server()
    assertion_id = re.search(r'<ns1:Assertion [^>]*ID="([^"]+)"', xml)
    assert assertion_id, xml[:300]
    signed = server.sec.sign_statement(xml, ASSERTION, key_file=server.sec.key_file, node_id=assertion_id.group(1))
    return signed.decode() if isinstance(signed, bytes) else signed
