"""Google Workspace groups for an OIDC connector with `cloud_service_account` (or `_uri`) and
`cloud_admin_email`: Google's ID tokens carry no groups, so the user's groups are read from the
Admin SDK Directory API (`groups.list?userKey=`) with the service account, impersonating the
administrator (a domain-wide delegation JWT grant). The group email addresses become `groups`.

The service account's key is read when a sign-in needs it (the inline JSON or its secret
reference, or the file), and never logged or shown: a failure names the step, not the key.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

import aiohttp
import jwt

from bot.auth.directory.http import access_token, request_json
from bot.auth.errors import SignInError
from bot.connectors.field_checks import ConnectorSecrets, resolve_secret

DIRECTORY = "https://admin.googleapis.com"
TOKEN_URI = "https://oauth2.googleapis.com/token"
SCOPE = "https://www.googleapis.com/auth/admin.directory.group.readonly"
MAX_PAGES = 50


@dataclass(frozen=True)
class ServiceAccount:
    client_email: str
    private_key: str = field(repr=False)
    admin_email: str = ""


def service_account(doc: dict[str, Any], secrets: ConnectorSecrets) -> ServiceAccount | None:
    """The connector's service account, or None when it names none (then nothing is looked up)."""
    spec = doc.get("spec") or {}
    admin = spec.get("cloud_admin_email")
    if not isinstance(admin, str) or not admin:
        return None
    text, problems = resolve_secret(doc, "/spec/cloud_service_account", secrets)
    uri = spec.get("cloud_service_account_uri")
    if text is None and not problems and isinstance(uri, str) and uri:
        text = _read_file(uri)
    if text is None or problems:
        if spec.get("cloud_service_account") or uri:
            raise _failed("the service account's credentials cannot be read")
        return None
    try:
        key = json.loads(text)
    except ValueError:
        raise _failed("the service account's credentials are not JSON (a Google service-account key file)") from None
    if not isinstance(key, dict) or not isinstance(key.get("client_email"), str) \
            or not isinstance(key.get("private_key"), str):
        raise _failed("the service account's credentials lack `client_email` or `private_key`")
    return ServiceAccount(key["client_email"], key["private_key"], admin)


def _read_file(uri: str) -> str:
    path = unquote(urlsplit(uri).path) if uri.startswith("file:") else uri
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _failed(f"the service-account file cannot be read ({exc.__class__.__name__})") from None


async def with_google_groups(http: aiohttp.ClientSession, account: ServiceAccount | None, claims: dict[str, Any],
                             directory_url: str | None = None) -> dict[str, Any]:
    """The claims, with `groups` = the user's group emails when the connector has a service account."""
    if account is None:
        return claims
    email = claims.get("email")
    if not isinstance(email, str) or not email:
        raise _failed("the ID token carries no `email` to look the user's groups up by")
    token_uri = (directory_url + "/token") if directory_url else TOKEN_URI
    token = await _token(http, account, token_uri)
    base = (directory_url or DIRECTORY) + "/admin/directory/v1/groups"
    groups: list[str] = []
    page_token = ""
    for _ in range(MAX_PAGES):
        query = {"userKey": email, "maxResults": "200", **({"pageToken": page_token} if page_token else {})}
        page = await _get(http, f"{base}?{urlencode(query)}", token)
        groups += [g["email"] for g in page.get("groups") or [] if isinstance(g, dict) and isinstance(g.get("email"), str)]
        following = page.get("nextPageToken")
        page_token = following if isinstance(following, str) else ""
        if not page_token:
            return {**claims, "groups": groups}
    raise _failed(f"the Directory API returned more than {MAX_PAGES} pages of groups")


async def _token(http: aiohttp.ClientSession, account: ServiceAccount, token_uri: str) -> str:
    now = int(time.time())
    claims = {"iss": account.client_email, "sub": account.admin_email, "scope": SCOPE, "aud": token_uri,
              "iat": now, "exp": now + 3600}
    try:
        assertion = jwt.encode(claims, account.private_key, algorithm="RS256")
    except (ValueError, TypeError, jwt.PyJWTError):
        raise _failed("the service account's private key cannot sign (is it the key file's `private_key`?)") from None
    status, body = await _request(http, "POST", token_uri, data={
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion})
    token, error = access_token(status, body)
    if token is None:
        raise _failed(f"the service account got no token ({error}); check its domain-wide delegation for the "
                      f"scope {SCOPE} and cloud_admin_email")
    return token


async def _get(http: aiohttp.ClientSession, url: str, token: str) -> dict[str, Any]:
    status, body = await _request(http, "GET", url, headers={"Authorization": f"Bearer {token}"})
    if status != 200 or not isinstance(body, dict):
        raise _failed(f"the Directory API answered HTTP {status}")
    return body


async def _request(http: aiohttp.ClientSession, method: str, url: str, **kwargs: Any) -> tuple[int, Any]:
    return await request_json(http, method, url, _failed, **kwargs)


def _failed(why: str) -> SignInError:
    return SignInError("groups-lookup", f"the Google Workspace group lookup (cloud_service_account) failed: {why}",
                       status=502)
