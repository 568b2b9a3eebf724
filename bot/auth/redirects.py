"""Where browsers and terminals may be sent: pure checks of redirect URLs (design.md).

- `web_return_path`: the `redirect_url` of the web endpoints is a path on this server (one `/`
  not followed by `/` or `\\`, no whitespace or control character): never another site.
- `check_client_redirect`: the terminal client's listener, checked as Teleport checks it.
- `choose_redirect_url`: which of a connector's callback URLs to send to the provider.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

import re2

DEFAULT_RETURN = "/console/"
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
MAX_URL = 2048
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


class RedirectError(ValueError):
    """Why a redirect URL is refused (safe to show: it names the rule, and echoes no secret)."""


def web_return_path(value: str | None) -> str:
    """The path to land on after a web sign-in; raises RedirectError for anything but a local path."""
    if value is None or value == "":
        return DEFAULT_RETURN
    if len(value) > MAX_URL:
        raise RedirectError(f"redirect_url is longer than {MAX_URL} characters")
    if any(c.isspace() or unicodedata.category(c) == "Cc" for c in value):
        raise RedirectError("redirect_url must not contain whitespace or control characters")
    if not value.startswith("/") or value[1:2] in ("/", "\\"):
        raise RedirectError("redirect_url must be a path on this server, such as /console/ (one `/` "
                            "not followed by `/` or `\\`); other sites are refused")
    return value


@dataclass(frozen=True)
class ClientRedirect:
    url: str
    secret_key: bytes  # the AES-256 key the answer is sealed with


def check_client_redirect(url: str, *, allowed_https_hostnames: Sequence[str] = (),
                          insecure_allowed_cidr_ranges: Sequence[str] = ()) -> ClientRedirect:
    """The terminal client's `redirect_url`, or RedirectError saying which rule it breaks."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL:
        raise RedirectError(f"redirect_url must be a URL of at most {MAX_URL} characters")
    if any(c.isspace() or unicodedata.category(c) == "Cc" for c in url):
        raise RedirectError("redirect_url must not contain whitespace or control characters")
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise RedirectError(f"redirect_url is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise RedirectError("redirect_url must be http or https")
    if "@" in parts.netloc or "#" in url:
        raise RedirectError("redirect_url must not carry user information or a fragment")
    if parts.path != "/callback":
        raise RedirectError("redirect_url's path must be exactly /callback")
    key = _secret_key(parts.query)
    if not host:
        raise RedirectError("redirect_url has no host")
    if host in LOOPBACK_HOSTS:
        return ClientRedirect(url, key)
    if _in_cidrs(host, insecure_allowed_cidr_ranges):
        return ClientRedirect(url, key)
    if parts.scheme == "https" and port in (None, 443) and _host_allowed(host, allowed_https_hostnames):
        return ClientRedirect(url, key)
    raise RedirectError(f"redirect_url's host `{host}` is not allowed: use localhost, 127.0.0.1 or ::1, or "
                        "add it to the connector's client_redirect_settings (allowed_https_hostnames for "
                        "https on port 443, insecure_allowed_cidr_ranges for IP addresses)")


def _secret_key(query: str) -> bytes:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        pairs = []
    if len(pairs) != 1 or pairs[0][0] != "secret_key" or not _HEX64.fullmatch(pairs[0][1]):
        raise RedirectError("redirect_url's query must be exactly one secret_key of 64 hex digits")
    return bytes.fromhex(pairs[0][1])


def _in_cidrs(host: str, ranges: Sequence[str]) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    for text in ranges:
        try:
            if address in ipaddress.ip_network(text, strict=False):
                return True
        except ValueError:
            continue  # the connector's validation reports a bad range; it allows nothing here
    return False


def _host_allowed(host: str, patterns: Sequence[str]) -> bool:
    for pattern in patterns:
        if len(pattern) >= 2 and pattern.startswith("^") and pattern.endswith("$"):
            try:
                if re2.compile(pattern).match(host):
                    return True
            except re2.error:
                continue
        elif re.fullmatch("".join(".*" if part == "*" else re.escape(part)
                                  for part in re.split(r"(\*)", pattern.lower())), host):
            return True
    return False


def choose_redirect_url(urls: Sequence[str], public_url: str | None) -> str:
    """The entry whose host and port match the public URL, else whose host does, else the first."""
    if len(urls) == 1 or not public_url:
        return urls[0]
    public = urlsplit(public_url)
    for url in urls:
        if _host_port(url) == _host_port(public_url):
            return url
    for url in urls:
        if urlsplit(url).hostname == public.hostname:
            return url
    return urls[0]


def _host_port(url: str) -> tuple[str | None, int | None]:
    parts = urlsplit(url)
    try:
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:
        port = None
    return parts.hostname, port


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL, normalised (host lowercased, default port dropped, never
    userinfo), or "" when it has none: what the Origin check compares and what messages may name.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ""
    default = {"https": 443, "http": 80}.get(parts.scheme)
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")
