"""Whether a connector's service URLs can reach this server, under `REVIEWER_PUBLIC_URL` (pure).

The identity provider sends the browser back to the URL the connector names: for OIDC the
`redirect_url` entry the server sends (the one on the public URL's host and port, else the first),
for SAML the `acs`. When none of those is this server's own callback — `/v1/webapi/oidc/callback`,
`/v1/webapi/saml/acs[/<name>]` on the public URL's origin — every sign-in would end at a page that
is not ours, so the reconcile says so (and what to write) instead of "valid and ready". Without a
public URL the server does not know its own address, and nothing is checked.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.connectors.kinds import OIDC, ConnectorKind
from bot.connectors.problem import Problem, problem
from bot.connectors.urls import URLError, parse_url
from bot.documents.pointers import get_at

OIDC_CALLBACK = "/v1/webapi/oidc/callback"
SAML_ACS = "/v1/webapi/saml/acs"
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class _Place:
    scheme: str
    host: str
    port: int
    path: str

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == _DEFAULT_PORTS.get(self.scheme) else f":{self.port}"
        return f"{self.scheme}://{host}{port}"


def _place(url: object) -> _Place | None:
    """The URL's scheme, host (lower case), port (default filled in) and path, read as sign-in's
    choice of `redirect_url` reads them (bot/auth/redirects.py); None for what is not an absolute
    http(s) URL (the URL checks report those)."""
    if not isinstance(url, str):
        return None
    try:
        parts = parse_url(url)
    except URLError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    port = int(parts.port) if parts.port else _DEFAULT_PORTS[parts.scheme]
    return _Place(parts.scheme, parts.hostname.lower(), port, parts.path)


def callback_problems(kind: ConnectorKind, doc: dict, public_url: str | None) -> list[Problem]:
    """Problems of a connector whose provider could never send the browser back to this server."""
    public = _place(public_url) if public_url else None
    if public is None:
        return []
    return _oidc(doc, public) if kind is OIDC else _saml(doc, public)


def _oidc(doc: dict, public: _Place) -> list[Problem]:
    urls = get_at(doc, "/spec/redirect_url")
    entries = [(index, _place(url)) for index, url in enumerate(urls if isinstance(urls, list) else [])]
    callback = public.origin + OIDC_CALLBACK
    found: list[Problem] = []
    for index, place in entries:
        if place is not None and (place.host, place.port) == (public.host, public.port) \
                and (place.scheme, place.path) != (public.scheme, OIDC_CALLBACK):
            found.append(problem(f"/spec/redirect_url/{index}", "callback-url",
                                 f"is on this server's public address (REVIEWER_PUBLIC_URL), so it is the one sent "
                                 f"to the provider, but it is not the server's callback: write `{callback}`"))
    if not any(place is not None and (place.scheme, place.host, place.port, place.path)
               == (public.scheme, public.host, public.port, OIDC_CALLBACK) for _, place in entries) and entries:
        found.append(problem("/spec/redirect_url", "callback-url",
                             f"has no entry that is this server's callback under REVIEWER_PUBLIC_URL, so no sign-in "
                             f"can come back: add `{callback}` (and register it at the provider)"))
    return found


def _saml(doc: dict, public: _Place) -> list[Problem]:
    acs = get_at(doc, "/spec/acs")
    place = _place(acs)
    if place is None:
        return []
    name = get_at(doc, "/metadata/name")
    paths = (SAML_ACS, f"{SAML_ACS}/{name}") if isinstance(name, str) and name else (SAML_ACS,)
    if (place.scheme, place.host, place.port) == (public.scheme, public.host, public.port) and place.path in paths:
        return []
    return [problem("/spec/acs", "callback-url",
                    f"is not this server's assertion consumer under REVIEWER_PUBLIC_URL, so no sign-in can come "
                    f"back: write `{public.origin}{paths[-1]}` (and give the identity provider the same URL)")]
