"""The double's manifest flow (tests/support/github_double/manifest_flow.py): GitHub's web form registers
an app and redirects with a code; the code converts once, into credentials that work."""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs, urlsplit

import aiohttp
import jwt

MANIFEST = {"name": "Reviewer", "url": "https://reviewer.example.com",
            "hook_attributes": {"url": "https://reviewer.example.com/webhook"},
            "redirect_url": "https://reviewer.example.com/setup/callback?x=1",
            "default_permissions": {"checks": "write"}, "default_events": ["pull_request"]}


async def _register(http: aiohttp.ClientSession, origin: str, path: str, manifest: dict) -> tuple[int, str]:
    async with http.post(f"{origin}{path}?state=s-1", data={"manifest": json.dumps(manifest)},
                         allow_redirects=False) as response:
        return response.status, response.headers.get("Location", await response.text())


async def test_a_code_converts_once_into_credentials_that_sign_in_as_the_app(github):
    async with aiohttp.ClientSession() as http:
        status, location = await _register(http, github.origin, "/organizations/acme/settings/apps/new", MANIFEST)
        assert status == 302 and location.startswith("https://reviewer.example.com/setup/callback?x=1&")
        query = parse_qs(urlsplit(location).query)
        assert query["state"] == ["s-1"]
        code = query["code"][0]
        async with http.post(f"{github.url}/app-manifests/{code}/conversions") as response:
            assert response.status == 201
            app = await response.json()
        async with http.post(f"{github.url}/app-manifests/{code}/conversions") as response:
            assert response.status == 404  # once
        token = jwt.encode({"iat": int(time.time()) - 30, "exp": int(time.time()) + 300, "iss": str(app["id"])},
                           app["pem"], algorithm="RS256")
        async with http.get(f"{github.url}/app", headers={"Authorization": f"Bearer {token}"}) as response:
            assert response.status == 200 and (await response.json())["slug"] == "reviewer"
    assert app["owner"]["login"] == "acme" and app["events"] == ["pull_request"]
    assert {"client_id", "client_secret", "webhook_secret", "pem"} <= set(app)


async def test_a_manifest_without_a_homepage_is_refused(github):
    async with aiohttp.ClientSession() as http:
        status, text = await _register(http, github.origin, "/settings/apps/new", {"name": "x"})
    assert status == 422 and "url is required" in text
