"""Shared test material for the connector tests: real key pairs, descriptors, documents, a server.

Key material is generated at test time (never committed): EC P-256 keeps it fast.
"""

from __future__ import annotations

import base64
import copy
import datetime
import json
import os
from functools import cache

from aiohttp import ClientSession, web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from bot.server.resources.api import setup_routes
from bot.store import storage_for

TOKEN = "test-admin-token-0123456789abcdef"
OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
SAML_PATH = "/apis/resources.service.dev/v2/samlconnectors"


@cache
def key_pair(name: str = "idp") -> tuple[str, str, bytes]:
    """(certificate PEM, private key PEM, certificate DER) of a fresh self-signed pair."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=365))
            .sign(key, hashes.SHA256()))
    cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return cert_pem, key_pem, cert.public_bytes(serialization.Encoding.DER)


def descriptor(entity_id: str = "https://idp.example.com/saml", sso: str = "https://idp.example.com/sso",
               cert_der: bytes | None = None) -> str:
    cert_der = cert_der if cert_der is not None else key_pair()[2]
    return f"""<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"
    xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="{entity_id}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data>
      <ds:X509Certificate>{base64.b64encode(cert_der).decode()}</ds:X509Certificate>
    </ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="{sso}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>"""


OIDC_DOC = {
    "apiVersion": "resources.service.dev/v3",
    "kind": "ServiceOIDCConnector",
    "metadata": {"name": "okta"},
    "spec": {
        "issuer_url": "https://example.okta.com",
        "client_id": "0oa1b2c3d4",
        "client_secret": "literal-client-secret-value",
        "redirect_url": ["https://reviewer.example.com/v1/webapi/oidc/callback"],
        "claims_to_roles": [{"claim": "groups", "value": "reviewers", "roles": ["reviewer"]}],
    },
}


def oidc_doc() -> dict:
    return copy.deepcopy(OIDC_DOC)


def saml_doc() -> dict:
    cert = key_pair()[0]
    return {
        "apiVersion": "resources.service.dev/v2",
        "kind": "ServiceSAMLConnector",
        "metadata": {"name": "okta-saml"},
        "spec": {
            "acs": "https://reviewer.example.com/v1/webapi/saml/acs/okta-saml",
            "issuer": "http://www.okta.com/exk1",
            "sso": "https://example.okta.com/app/exk1/sso/saml",
            "cert": cert,
            "attributes_to_roles": [{"name": "groups", "value": "reviewers", "roles": ["reviewer"]}],
        },
    }


def as_yaml(doc: dict) -> str:
    """JSON is YAML 1.2: positions still come from the loader."""
    return json.dumps(doc, indent=2)


class ApiServer:
    """The connector routes alone on an aiohttp app, served on 127.0.0.1, and a client to it."""

    def __init__(self, db_path: str, *, secrets_dir: str | None = None, token: str | None = TOKEN,
                 clock=None, descriptors=None) -> None:
        self.db_path, self.secrets_dir, self.token, self.clock = db_path, secrets_dir, token, clock
        self.descriptors = descriptors  # a DescriptorSource (a short timeout, say), or the routes' own

    async def __aenter__(self) -> ApiServer:
        app = web.Application()
        url = self.db_path if "://" in self.db_path else f"sqlite:///{self.db_path}"
        self.storage = storage_for(url)
        await self.storage.open()
        setup_routes(app, self.storage.connectors, admin_token=self.token, secrets_dir=self.secrets_dir,
                     clock=self.clock, descriptors=self.descriptors)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{port}"
        self.session = ClientSession(headers={"Authorization": f"Bearer {TOKEN}"})
        return self

    async def __aexit__(self, *exc) -> None:
        await self.session.close()
        await self.runner.cleanup()
        await self.storage.close()

    async def request(self, method: str, path: str, *, body=None, yaml_text: str | None = None,
                      headers: dict | None = None) -> tuple[int, dict]:
        kwargs: dict = {"headers": headers or {}}
        if yaml_text is not None:
            kwargs["data"] = yaml_text.encode()
            kwargs["headers"] = {"Content-Type": "application/yaml", **kwargs["headers"]}
        elif body is not None:
            kwargs["json"] = body
        async with self.session.request(method, self.base + path, **kwargs) as response:
            text = await response.text()
            return response.status, (json.loads(text) if text else {})

    async def put(self, path: str, doc: dict) -> tuple[int, dict]:
        return await self.request("PUT", f"{path}/{doc['metadata']['name']}", body=doc)


def write_secret(root: str, name: str, key: str, value: str) -> str:
    os.makedirs(os.path.join(root, name), exist_ok=True)
    with open(os.path.join(root, name, key), "w") as handle:
        handle.write(value)
    return f"secret://{name}/{key}"
