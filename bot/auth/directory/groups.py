"""Directory group lookups: a user's groups fetched from Microsoft Graph when an Entra ID token or
assertion points to a group source instead of carrying them (the "groups overage": more than 150
or 200 groups), so that roles still map from `groups`.

The source named in the token (`_claim_sources…endpoint`, SAML `groups.link`) is never fetched:
the token is the user's to shape, so a URL in it could aim our credentials anywhere. The lookup
goes to the connector's `graph_endpoint` (default the global Graph) with the connector's own
credentials, and follows Graph's `@odata.nextLink` pages only while they stay on that endpoint.
A failed lookup refuses the sign-in, saying which lookup and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp

from bot.auth.directory.http import access_token, request_json
from bot.auth.errors import SignInError
from bot.auth.redirects import origin_of

GRAPH = "https://graph.microsoft.com"
GROUPS_LINK = "http://schemas.microsoft.com/claims/groups.link"
SAML_TENANT = "http://schemas.microsoft.com/identity/claims/tenantid"
SAML_OBJECT_ID = "http://schemas.microsoft.com/identity/claims/objectidentifier"
SAML_GROUPS = "http://schemas.microsoft.com/ws/2008/06/identity/claims/groups"
MAX_PAGES = 100  # 100 pages of up to 999 groups: far beyond any directory's membership
# Each cloud pairs its Graph host with a login host (REVIEWER_DIRECTORY_URL replaces both).
_LOGIN_HOSTS = {
    "graph.microsoft.com": "https://login.microsoftonline.com",
    "graph.microsoft.us": "https://login.microsoftonline.us",
    "dod-graph.microsoft.us": "https://login.microsoftonline.us",
    "microsoftgraph.chinacloudapi.cn": "https://login.chinacloudapi.cn",
}
_PATHS = {
    "security-groups": "/v1.0/users/{oid}/transitiveMemberOf/microsoft.graph.group?$select=id,securityEnabled&$top=999",
    "all-groups": "/v1.0/users/{oid}/transitiveMemberOf/microsoft.graph.group?$select=id&$top=999",
    "directory-roles": "/v1.0/users/{oid}/transitiveMemberOf/microsoft.graph.directoryRole?$select=id&$top=999",
}


@dataclass(frozen=True)
class GraphLookup:
    graph_endpoint: str  # the cloud's Graph: the token's audience
    group_type: str
    client_id: str
    client_secret: str = field(repr=False)
    base: str = ""  # where requests go: the graph_endpoint, or REVIEWER_DIRECTORY_URL standing in for it

    @property
    def graph_base(self) -> str:
        return self.base or self.graph_endpoint

    @property
    def login_base(self) -> str:
        return self.base or _LOGIN_HOSTS.get((urlsplit(self.graph_endpoint).hostname or "").lower(),
                                             _LOGIN_HOSTS["graph.microsoft.com"])


@dataclass(frozen=True)
class GroupsProvider:
    """A connector's `directory_id_groups_provider`, read with the rest of its sign-in settings:
    where its group lookups go and which groups they count."""

    graph_endpoint: str = GRAPH
    group_type: str = "security-groups"


def groups_provider(spec: dict[str, Any]) -> GroupsProvider | None:
    """The connector's lookup settings, or None when `directory_id_groups_provider.disabled` (pure)."""
    provider = spec.get("directory_id_groups_provider") or {}
    if provider.get("disabled") is True:
        return None
    return GroupsProvider(str(provider.get("graph_endpoint") or GRAPH).rstrip("/"),
                          str(provider.get("group_type") or "security-groups"))


def graph_lookup(provider: GroupsProvider | None, client_id: str | None, client_secret: str | None,
                 directory_url: str | None = None) -> GraphLookup | None:
    """The connector's lookup with its credentials, unless it has none or the provider is off (pure)."""
    if provider is None or not client_id or not client_secret:
        return None
    return GraphLookup(provider.graph_endpoint, provider.group_type, client_id, client_secret, directory_url or "")


def oidc_overage(claims: dict[str, Any]) -> bool:
    """The ID token names a source for `groups` instead of carrying them (`_claim_names`)."""
    names = claims.get("_claim_names")
    return "groups" not in claims and isinstance(names, dict) and "groups" in names


def saml_overage(attributes: dict[str, list[str]]) -> bool:
    return GROUPS_LINK in attributes and "groups" not in attributes and SAML_GROUPS not in attributes


async def with_oidc_groups(http: aiohttp.ClientSession, provider: GroupsProvider | None, client_id: str,
                           client_secret: str, claims: dict[str, Any],
                           directory_url: str | None = None) -> dict[str, Any]:
    """The claims, with `groups` from Graph when the token points to a group source; the app token
    comes from the tenant (`tid`) the token names, at the login host of `graph_endpoint`'s cloud."""
    lookup = graph_lookup(provider, client_id, client_secret, directory_url)
    if lookup is None or not oidc_overage(claims):
        return claims
    endpoint = _token_endpoint(lookup, claims.get("tid"))
    return {**claims, "groups": await graph_groups(http, lookup, endpoint, claims.get("oid"))}


async def with_saml_groups(http: aiohttp.ClientSession, provider: GroupsProvider | None, client_id: str | None,
                           client_secret: str | None, attributes: dict[str, list[str]],
                           directory_url: str | None = None) -> dict[str, list[str]]:
    """The attributes, with `groups` (and Entra's groups attribute) from Graph after `groups.link`,
    authenticated with `credentials.oauth` at the tenant the assertion names."""
    lookup = graph_lookup(provider, client_id, client_secret, directory_url)
    if lookup is None or not saml_overage(attributes):
        return attributes
    token_endpoint = _token_endpoint(lookup, (attributes.get(SAML_TENANT) or [""])[0])
    groups = await graph_groups(http, lookup, token_endpoint, (attributes.get(SAML_OBJECT_ID) or [""])[0])
    return {**attributes, "groups": groups, SAML_GROUPS: groups}


def _token_endpoint(lookup: GraphLookup, tenant: Any) -> str:
    if not isinstance(tenant, str) or not tenant or not all(c.isalnum() or c in "-." for c in tenant):
        raise _failed("the token points to its groups but carries no usable tenant id (`tid`)")
    return f"{lookup.login_base}/{tenant}/oauth2/v2.0/token"


async def graph_groups(http: aiohttp.ClientSession, lookup: GraphLookup, token_endpoint: str, oid: Any) -> list[str]:
    """The ids of the user's groups (transitive), filtered by `group_type`, every page."""
    if not isinstance(oid, str) or not oid.strip():
        raise _failed("the token points to its groups but carries no object id (`oid`) to look them up by")
    token = await _app_token(http, lookup, token_endpoint)
    url: str | None = lookup.graph_base + _PATHS.get(lookup.group_type, _PATHS["security-groups"]).format(
        oid=quote(oid.strip(), safe=""))
    found: list[str] = []
    for _ in range(MAX_PAGES):
        if url is None:
            return found
        page = await _get(http, url, token)
        for item in page.get("value") or []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                if lookup.group_type != "security-groups" or item.get("securityEnabled") is True:
                    found.append(item["id"])
        url = _next_page(page.get("@odata.nextLink"), lookup.graph_base)
    raise _failed(f"Graph returned more than {MAX_PAGES} pages of groups")


def _next_page(link: Any, endpoint: str) -> str | None:
    if link is None:
        return None
    if not isinstance(link, str) or origin_of(link) != origin_of(endpoint):
        raise _failed("Graph's next-page link leaves graph_endpoint, so it was not followed")
    return link


async def _app_token(http: aiohttp.ClientSession, lookup: GraphLookup, token_endpoint: str) -> str:
    form = {"grant_type": "client_credentials", "client_id": lookup.client_id,
            "client_secret": lookup.client_secret, "scope": lookup.graph_endpoint + "/.default"}
    status, body = await _request(http, "POST", token_endpoint, data=form)
    token, error = access_token(status, body)
    if token is None:
        raise _failed(f"the connector's client could not get a Graph token from {origin_of(token_endpoint)} "
                      f"({error}); check its client id and secret")
    return token


async def _get(http: aiohttp.ClientSession, url: str, token: str) -> dict[str, Any]:
    status, body = await _request(http, "GET", url, headers={"Authorization": f"Bearer {token}"})
    if status != 200 or not isinstance(body, dict):
        hint = "; grant the app GroupMember.Read.All (application)" if status in (401, 403) else ""
        raise _failed(f"Graph answered HTTP {status} at {origin_of(url)}{hint}")
    return body


async def _request(http: aiohttp.ClientSession, method: str, url: str, **kwargs: Any) -> tuple[int, Any]:
    return await request_json(http, method, url, _failed, **kwargs)


def _failed(why: str) -> SignInError:
    return SignInError("groups-lookup", f"the Microsoft Graph group lookup (directory_id_groups_provider) failed: "
                                        f"{why}", status=502)
