"""GitHub's App manifest flow, the pure parts: the manifest, where to post it, where the API is.

GitHub's docs ("Registering a GitHub App from a manifest"): a browser POSTs a form field
`manifest` (JSON) to `{github}/settings/apps/new?state=…` (an organisation's:
`{github}/organizations/ORG/settings/apps/new?state=…`); once the person confirms, GitHub sends the
browser to the manifest's `redirect_url` with `?code=…&state=…`; the code, within an hour and once,
turns into the app's credentials with `POST {api}/app-manifests/{code}/conversions`. The manifest
is `app.yml` (packaged here; the repository's top-level `app.yml` links to it) with the
deployment's URLs filled in. bot/server/setup.py serves the pages; bot/commands/setup.py is the
command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import quote, urlencode, urljoin, urlsplit, urlunsplit

from bot.documents.yamldoc import load_yaml
from bot.github.client import DEFAULT_API_URL
from bot.github.credentials import AppCredentials

GITHUB_COM = "https://github.com"
CODE_LIFETIME = 3600  # seconds: GitHub wants the whole flow done within an hour
_ORIGIN = re.compile(r"https?://[^/\s?#@]+")
_ORG = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")  # GitHub's login rule
_CODE = re.compile(r"[A-Za-z0-9_-]{1,200}")


class ManifestError(ValueError):
    """A flag or an answer that cannot be used; the message names it and the rule."""


def load_manifest() -> dict[str, Any]:
    """app.yml as shipped with the package."""
    text = resources.files("bot.github").joinpath("app.yml").read_text(encoding="utf-8")
    doc, problems = load_yaml(text)
    if doc is None or problems or not isinstance(doc.value, dict):
        raise ManifestError(f"bot/github/app.yml is not a YAML mapping: {[p.message for p in problems]}")
    return doc.value


def origin(url: str, flag: str) -> str:
    """An http(s) origin without a path (`https://reviewer.example.com`), or ManifestError."""
    url = url.strip().rstrip("/")
    if not _ORIGIN.fullmatch(url):
        raise ManifestError(f"{flag}: {url!r} is not an http(s) address without a path, such as "
                            "https://reviewer.example.com")
    return url


@dataclass(frozen=True)
class GitHubEndpoints:
    """Where the person registers the app (the web host) and where the code converts (the API)."""

    web: str
    api: str

    @property
    def enterprise(self) -> bool:
        return self.api != DEFAULT_API_URL


def endpoints(github_url: str | None, api_url: str | None = None) -> GitHubEndpoints:
    """github.com's API is api.github.com; GitHub Enterprise Server's is `{its origin}/api/v3`.
    `api_url` (GITHUB_API_URL) overrides the derived one, as for `reviewer serve`."""
    web = origin(github_url or GITHUB_COM, "--github-url")
    if api_url:
        api = api_url.strip().rstrip("/")
        if not re.match(r"https?://[^/\s?#@]+(/|$)", api):
            raise ManifestError(f"GITHUB_API_URL: {api!r} is not an http(s) URL")
    elif urlsplit(web).hostname in ("github.com", "www.github.com"):
        api = DEFAULT_API_URL
    else:
        api = urljoin(web + "/", "api/v3")
    return GitHubEndpoints(web, api)


def web_url(api_url: str) -> str:
    """Where people see what the API at `api_url` serves (the pull requests, commits and check
    runs the console links to): `https://github.com` for api.github.com, a GitHub Enterprise
    Server's own origin for `{its origin}/api/v3` (the inverse of `endpoints`), and github.com
    for any other API root (a proxy or a double of github.com's API); `GITHUB_URL` overrides."""
    parts = urlsplit(api_url.strip().rstrip("/"))
    path = parts.path.rstrip("/")
    if parts.hostname != "api.github.com" and path.endswith("/api/v3"):
        return urlunsplit((parts.scheme, parts.netloc, path[:-len("/api/v3")], "", ""))
    return GITHUB_COM


def check_org(org: str | None) -> str | None:
    if org is not None and not _ORG.fullmatch(org):
        raise ManifestError(f"--org: {org!r} is not a GitHub organisation login (letters, digits and single "
                            "hyphens, at most 39 characters)")
    return org


def new_app_url(github: GitHubEndpoints, org: str | None, state: str) -> str:
    """Where the page posts the manifest (the state in the query, as GitHub's docs show)."""
    path = f"/organizations/{quote(org, safe='')}/settings/apps/new" if org else "/settings/apps/new"
    return f"{github.web}{path}?{urlencode({'state': state})}"


def build_manifest(template: dict[str, Any], public_url: str, redirect_url: str) -> dict[str, Any]:
    """app.yml with this deployment's addresses: the homepage, the webhook, the manifest flow's
    redirect (back to the setup server) and the callback URL (the server's home page)."""
    manifest = dict(template)
    manifest["url"] = public_url
    manifest["hook_attributes"] = {**dict(template.get("hook_attributes") or {}), "url": f"{public_url}/webhook"}
    manifest["redirect_url"] = redirect_url
    manifest["callback_urls"] = [f"{public_url}/"]
    return manifest


def check_code(code: str) -> str:
    if not _CODE.fullmatch(code):
        raise ManifestError("the code GitHub sent back is not of GitHub's form (letters, digits, `-`, `_`)")
    return code


def conversion_url(github: GitHubEndpoints, code: str) -> str:
    """`POST {api}/app-manifests/{code}/conversions`, joined onto the API root with its path kept."""
    return urljoin(github.api + "/", f"app-manifests/{quote(check_code(code), safe='')}/conversions")


@dataclass(frozen=True)
class Registered:
    """What setup keeps of GitHub's answer: the credentials, and what it may show."""

    credentials: AppCredentials
    name: str
    html_url: str

    @property
    def install_url(self) -> str:
        return f"{self.html_url.rstrip('/')}/installations/new"


def registered(answer: Any) -> Registered:
    """GitHub's 201 answer to the conversion (the `integration` schema, plus the four secrets)."""
    if not isinstance(answer, dict):
        raise ManifestError("GitHub's answer to the conversion is not a JSON object")
    missing = [k for k in ("id", "pem", "webhook_secret", "client_id", "client_secret", "html_url") if not answer.get(k)]
    if missing:
        raise ManifestError(f"GitHub's answer to the conversion lacks {', '.join(missing)}")
    if not isinstance(answer["id"], int) or not str(answer["html_url"]).startswith(("https://", "http://")):
        raise ManifestError("GitHub's answer to the conversion has an unusable id or html_url")
    credentials = AppCredentials(app_id=answer["id"], private_key=str(answer["pem"]),
                                 webhook_secret=str(answer["webhook_secret"]), client_id=str(answer["client_id"]),
                                 client_secret=str(answer["client_secret"]))
    return Registered(credentials, str(answer.get("name") or answer.get("slug") or "the app"), str(answer["html_url"]))
