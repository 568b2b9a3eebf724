"""A local double of Microsoft Graph for the group-lookup tests, over real HTTP on 127.0.0.1, shaped
after its published description: the identity platform's client-credentials token endpoint
(`POST /{tenant}/oauth2/v2.0/token`) and `GET /v1.0/users/{id}/transitiveMemberOf/microsoft.graph.group`
(and `…/microsoft.graph.directoryRole`) answering `{"value": [...], "@odata.nextLink": ...}` pages.

A connector reaches it through `directory_id_groups_provider.graph_endpoint`, the setting that
names a sovereign cloud's Graph; on a host that is no known cloud the token path is served by the
same origin. `Tripwire` is a server that only counts hits: the token's own group-source URL points
there, and a test proves it is never fetched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import jwt
from aiohttp import web

CLIENT_ID = "graph-app"
CLIENT_SECRET = "graph-app-secret-value"


@dataclass
class GraphDouble:
    groups: dict[str, list[dict]] = field(default_factory=dict)  # user object id → directory objects
    roles: dict[str, list[dict]] = field(default_factory=dict)
    page_size: int = 2
    foreign_next: str = ""  # when set, the first page's nextLink points here
    fail_status: int = 0
    url: str = ""
    token_requests: list[dict[str, str]] = field(default_factory=list)
    pages_served: int = 0

    async def token(self, request: web.Request) -> web.Response:
        form = {k: str(v) for k, v in (await request.post()).items()}
        self.token_requests.append({**form, "tenant": request.match_info["tenant"]})
        if (form.get("grant_type"), form.get("client_id"), form.get("client_secret")) != \
                ("client_credentials", CLIENT_ID, CLIENT_SECRET):
            return web.json_response({"error": "invalid_client"}, status=401)
        return web.json_response({"token_type": "Bearer", "expires_in": 3599, "access_token": "graph-token"})

    async def member_of(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != "Bearer graph-token":
            return web.json_response({"error": {"code": "InvalidAuthenticationToken"}}, status=401)
        if self.fail_status:
            return web.json_response({"error": {"code": "Authorization_RequestDenied"}}, status=self.fail_status)
        source = self.roles if request.match_info["kind"] == "microsoft.graph.directoryRole" else self.groups
        items = source.get(request.match_info["user"], [])
        start = int(request.query.get("$skiptoken", "0"))
        page = items[start:start + self.page_size]
        self.pages_served += 1
        body: dict = {"@odata.context": self.url + "/v1.0/$metadata#directoryObjects", "value": page}
        if start + self.page_size < len(items):
            body["@odata.nextLink"] = self.foreign_next or (
                f"{self.url}/v1.0/users/{request.match_info['user']}/transitiveMemberOf/"
                f"{request.match_info['kind']}?$skiptoken={start + self.page_size}")
        return web.json_response(body)

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[GraphDouble]:
        app = web.Application()
        app.router.add_post("/{tenant}/oauth2/v2.0/token", self.token)
        app.router.add_get("/v1.0/users/{user}/transitiveMemberOf/{kind}", self.member_of)
        async with _served(app) as url:
            self.url = url
            yield self


@dataclass
class Tripwire:
    hits: int = 0
    url: str = ""

    async def any(self, request: web.Request) -> web.Response:
        self.hits += 1
        return web.json_response({"value": [{"id": "foreign-group"}]})

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[Tripwire]:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.any)
        async with _served(app) as url:
            self.url = url
            yield self


@asynccontextmanager
async def _served(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def security_groups(*ids: str) -> list[dict]:
    return [{"@odata.type": "#microsoft.graph.group", "id": i, "securityEnabled": True} for i in ids]


@dataclass
class GoogleDirectoryDouble:
    """Google's OAuth token endpoint (the JWT-bearer grant of a service account with domain-wide
    delegation) and the Admin SDK `GET /admin/directory/v1/groups?userKey=` (`groups`,
    `nextPageToken`), checking the grant's signature with the service account's public key."""

    public_pem: bytes = b""
    client_email: str = "reviewer@project.iam.gserviceaccount.com"
    groups: dict[str, list[str]] = field(default_factory=dict)  # user email → group emails
    page_size: int = 2
    url: str = ""
    grants: list[dict] = field(default_factory=list)
    pages_served: int = 0

    async def token(self, request: web.Request) -> web.Response:
        form = {k: str(v) for k, v in (await request.post()).items()}
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        try:
            claims = jwt.decode(form.get("assertion", ""), self.public_pem, algorithms=["RS256"],
                                audience=self.url + "/token")
        except jwt.PyJWTError:
            return web.json_response({"error": "invalid_grant"}, status=400)
        self.grants.append(claims)
        if claims.get("iss") != self.client_email:
            return web.json_response({"error": "unauthorized_client"}, status=401)
        return web.json_response({"access_token": "directory-token", "token_type": "Bearer", "expires_in": 3599})

    async def list_groups(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != "Bearer directory-token":
            return web.json_response({"error": {"code": 401}}, status=401)
        emails = self.groups.get(request.query.get("userKey", ""), [])
        start = int(request.query.get("pageToken") or 0)
        self.pages_served += 1
        body: dict = {"kind": "admin#directory#groups",
                      "groups": [{"kind": "admin#directory#group", "email": e} for e in
                                 emails[start:start + self.page_size]]}
        if start + self.page_size < len(emails):
            body["nextPageToken"] = str(start + self.page_size)
        return web.json_response(body)

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[GoogleDirectoryDouble]:
        app = web.Application()
        app.router.add_post("/token", self.token)
        app.router.add_get("/admin/directory/v1/groups", self.list_groups)
        async with _served(app) as url:
            self.url = url
            yield self
