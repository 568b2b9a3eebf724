"""The documented examples are real: each validates offline and reconciles through the API, and
the reference documents every field the schemas have."""

from __future__ import annotations

import pathlib
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import jsonschema
import pytest
from aiohttp import web

from bot.connectors.kinds import by_kind
from bot.connectors.schema_oidc import SPEC as OIDC_SPEC
from bot.connectors.schema_saml import SPEC as SAML_SPEC
from bot.connectors.schemas import oidc_json_schema, saml_json_schema
from bot.connectors.validate import validate_connector_text
from bot.documents.yamldoc import load_yaml
from bot.shapes import Obj
from tests.support.connectors_support import ApiServer, descriptor, write_secret

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
EXAMPLES = sorted((ROOT / "docs" / "examples" / "connectors").glob("*.yaml"))
DOC = ROOT / "docs" / "connectors.md"


def test_every_provider_has_an_example():
    names = {p.stem for p in EXAMPLES}
    assert names == {"okta-oidc", "entra-id-oidc", "google-workspace-oidc", "gitlab-oidc", "keycloak-oidc",
                     "okta-saml", "entra-id-saml", "adfs-saml"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_validates_offline(path):
    kind, diags = validate_connector_text(path.read_text())
    assert diags == []
    assert kind == ("saml-connector" if path.stem.endswith("saml") else "oidc-connector")
    schema = saml_json_schema() if kind == "saml-connector" else oidc_json_schema()
    jsonschema.validate(load_yaml(path.read_text())[0].value, schema)


@asynccontextmanager
async def _metadata_server() -> AsyncIterator[str]:
    """A local IdP metadata URL: the examples' IdP hosts are placeholders, unreachable here."""
    app = web.Application()
    app.router.add_get("/metadata", lambda _: web.Response(text=descriptor()))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/metadata"
    finally:
        await runner.cleanup()


async def test_examples_apply_and_reconcile(tmp_path):
    secrets = tmp_path / "secrets"
    async with ApiServer(str(tmp_path / "db"), secrets_dir=str(secrets)) as api, _metadata_server() as metadata:
        for path in EXAMPLES:
            # The reconcile step fetches each descriptor URL: point them at a real (local) document.
            text = re.sub(r"(entity_descriptor_url: )\S+", rf"\g<1>{metadata}", path.read_text())
            for name, key in re.findall(r"secret://([a-z0-9.-]+)/([-._a-zA-Z0-9]+)", text):
                write_secret(str(secrets), name, key, "{}" if key.endswith(".json") else "value")
            doc = load_yaml(text)[0].value
            kind = by_kind(doc["kind"])
            status, body = await api.request(
                "PUT", f"/apis/resources.service.dev/{kind.version}/{kind.plural}/{doc['metadata']['name']}",
                yaml_text=text)
            assert status == 201, (path.name, body)
            reconciled = next(c for c in body["status"]["conditions"] if c["type"] == "SuccessfullyReconciled")
            assert reconciled["status"] == "True", (path.name, reconciled["message"])


def _fields(shape: Obj, prefix: str = "") -> set[str]:
    out = set()
    for key, child in shape.properties.items():
        out.add(prefix + key)
        inner = getattr(child, "items", None) if not isinstance(child, Obj) else child
        if isinstance(inner, Obj):
            out |= _fields(inner, f"{prefix}{key}.")
    return out


def test_reference_names_every_field_and_example():
    text = DOC.read_text()
    for field in sorted(_fields(OIDC_SPEC) | _fields(SAML_SPEC)):
        assert f"`{field.rsplit('.', 1)[-1]}`" in text, field
    for path in EXAMPLES:
        assert f"examples/connectors/{path.name}" in text, path.name
