"""Hostile bytes from unauthenticated callers, over a raw socket so that nothing on our side tidies
them first: undecodable bytes in `Authorization` and the session cookie, a lone surrogate in a
JSON body, a NUL in a connector name. Every one is a 4xx with a JSON error, never a 500, and the
store (PostgreSQL, which refuses NUL and surrogates outright) is never asked."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.oidc_support import ADMIN_TOKEN, signin_server

OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
SAML_PATH = "/apis/resources.service.dev/v2/samlconnectors"


async def raw(url: str, method: str, path: str, headers: bytes = b"", body: bytes = b"") -> tuple[int, bytes]:
    """One HTTP/1.1 request written byte for byte; (status, body)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(method.encode() + b" " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     + headers + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        await writer.drain()
        answer = await reader.read()
    finally:
        writer.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), payload


@pytest.fixture
async def server(tmp_path, pg_url):
    async with signin_server(tmp_path, REVIEWER_DATABASE_URL=pg_url) as running:
        yield running


UNDECODABLE = [b"Authorization: Bearer \xff\xfe-not-utf8\r\n", b"Authorization: Bearer \xed\xa0\x80\r\n",
               b"Cookie: reviewer_session=\xff\xfe\r\n", b"Cookie: __Host-reviewer_session=\xc3\x28\r\n"]
GATED = [("GET", "/v1/webapi/session"), ("GET", OIDC_PATH), ("GET", "/v1/webapi/oidc/mfa/web?connector_id=a"),
         ("GET", "/api/config/acme/app"), ("POST", "/v1/webapi/logout")]


@pytest.mark.parametrize("header", UNDECODABLE)
async def test_undecodable_credentials_are_no_session(server, header):
    for method, path in GATED:
        status, body = await raw(server.url, method, path, header)
        assert status < 500 and (status >= 400 or path.endswith("logout")), (path, status, body[:300])
        assert b"Traceback" not in body


async def test_the_admin_token_still_works_beside_them(server):
    status, _ = await raw(server.url, "GET", OIDC_PATH, f"Authorization: Bearer {ADMIN_TOKEN}\r\n".encode())
    assert status == 200


@pytest.mark.parametrize("payload", [b'{"connector_id": "\\ud800", "redirect_url": "http://127.0.0.1:1/cb"}',
                                     b'{"connector_id": "a\\u0000b", "redirect_url": "http://127.0.0.1:1/cb"}',
                                     b'{"connector_id": "okta", "redirect_url": "\\udfff"}'])
async def test_console_login_refuses_unstorable_text(server, payload):
    headers = b"Content-Type: application/json\r\n"
    status, body = await raw(server.url, "POST", "/v1/webapi/oidc/login/console", headers, payload)
    assert status == 400, body
    assert json.loads(body)["error"]["check"] in ("request", "connector", "redirect-url")


@pytest.mark.parametrize("path", ["/v1/webapi/oidc/login/web?connector_id=a%00b",
                                  "/v1/webapi/oidc/login/web?connector_id=%ED%A0%80",
                                  "/v1/webapi/saml/sso?connector_id=a%00b"])
async def test_a_nul_in_a_sign_in_connector_name_is_a_400(server, path):
    status, body = await raw(server.url, "GET", path)
    assert status == 400, body
    assert b"connector_id" in body and b"RFC 1123" in body


@pytest.mark.parametrize("path", [f"{OIDC_PATH}/a%00b", f"{SAML_PATH}/a%00b", f"{OIDC_PATH}/%ED%A0%80"])
async def test_a_nul_in_a_resource_name_is_not_found(server, path):
    auth = f"Authorization: Bearer {ADMIN_TOKEN}\r\n".encode()
    for method in ("GET", "DELETE"):
        status, body = await raw(server.url, method, path, auth)
        assert status == 404, (method, body)
        assert json.loads(body)["reason"] == "NotFound"
