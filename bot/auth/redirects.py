"""Where browsers and terminals may be sent: pure checks of redirect URLs (docs/connectors.md).

Every target is parsed once, by the Go-strict parser the connector validation uses
(`bot.connectors.urls.parse_url`), and judged only from that parse; anything a browser would read
differently from it is refused rather than guessed at. Python's `urlsplit` reads the host of
`https://evil.com\\.example.com/` as `evil.com\\.example.com`, while a browser reads `\\` as `/`
and goes to evil.com; so a backslash, an escape, a non-ASCII character, a tab or newline (which a
browser drops), user information, an IPv6 zone or an IPv4 address in a form other than the four
dotted decimals are refused wherever they stand.

- `web_return_path`: the `redirect_url` of the web endpoints is a path on this server (one `/`
  not followed by `/` or `\\`, no whitespace or control character), which no escape (`%2F`, `%5C`)
  or dot segment can turn into another site.
- `check_client_redirect`: the terminal client's listener, checked as Teleport checks it; the URL
  the answer is sent to is rebuilt from the parts that were checked.
- `choose_redirect_url`: which of a connector's callback URLs to send to the provider.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from bot.auth.patterns import matches_any
from bot.connectors.urls import URL, URLError, parse_url

DEFAULT_RETURN = "/console/"
LOOPBACK_NAMES = ("localhost",)
LOOPBACK_ADDRESSES = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
MAX_URL = 2048
_SECRET_QUERY = re.compile(r"secret_key=([0-9a-fA-F]{64})")
_HOST_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
# WHATWG URL: a host whose last label is a number (decimal, or 0x hex) is an IPv4 address.
_NUMERIC_LABEL = re.compile(r"(0[xX][0-9a-fA-F]*|[0-9]+)")
_ESCAPE = re.compile(r"%([0-9a-fA-F]{2})")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")
_BROWSER_DIFFERS = "a browser would read it differently"


class RedirectError(ValueError):
    """Why a redirect URL is refused (safe to show: it names the rule, and echoes no secret)."""


def _plain(value: str) -> None:
    """What every redirect target needs before it is parsed: ASCII with no whitespace or control
    character (a browser drops tabs and newlines, and maps full-width dots to dots) and no
    backslash (a browser reads it as `/`)."""
    if len(value) > MAX_URL:
        raise RedirectError(f"redirect_url is longer than {MAX_URL} characters")
    if _CONTROL_OR_SPACE.search(value):
        raise RedirectError("redirect_url must not contain whitespace or control characters")
    if not value.isascii():
        raise RedirectError("redirect_url must be ASCII: percent-encode a path, and write an international "
                            "host name in its xn-- form")
    if "\\" in value:
        raise RedirectError(f"redirect_url must not contain `\\`: {_BROWSER_DIFFERS} (as `/`)")


def _parsed(value: str) -> URL:
    try:
        return parse_url(value)
    except URLError as exc:
        raise RedirectError(f"redirect_url is not a valid URL: it {exc}") from None


def web_return_path(value: str | None) -> str:
    """The path to land on after a web sign-in; raises RedirectError for anything but a local path."""
    if value is None or value == "":
        return DEFAULT_RETURN
    _plain(value)
    url = _parsed(value)
    if url.scheme or url.userinfo is not None or url.hostname or url.opaque or not url.path.startswith("/") \
            or url.path.startswith("//"):
        raise RedirectError("redirect_url must be a path on this server, such as /console/ (one `/` "
                            "not followed by `/` or `\\`); other sites are refused")
    for escape in _ESCAPE.findall(url.path):
        if chr(int(escape, 16)) in "/\\%" or _CONTROL_OR_SPACE.match(chr(int(escape, 16))):
            raise RedirectError(f"redirect_url's path must not escape `/`, `\\`, `%`, whitespace or control "
                                f"characters (%{escape}): {_BROWSER_DIFFERS}")
    if any(segment in (".", "..") for segment in unquote(url.path).split("/")):
        raise RedirectError(f"redirect_url's path must not contain `.` or `..` segments: {_BROWSER_DIFFERS}")
    return value


@dataclass(frozen=True)
class ClientRedirect:
    url: str  # rebuilt from the checked parts: scheme, lower-case host, port, /callback, secret_key
    secret_key: bytes  # the AES-256 key the answer is sealed with


def check_client_redirect(url: str, *, allowed_https_hostnames: Sequence[str] = (),
                          insecure_allowed_cidr_ranges: Sequence[str] = ()) -> ClientRedirect:
    """The terminal client's `redirect_url`, or RedirectError saying which rule it breaks."""
    if not isinstance(url, str) or not url:
        raise RedirectError(f"redirect_url must be a URL of at most {MAX_URL} characters")
    _plain(url)
    parts = _parsed(url)
    if parts.scheme not in ("http", "https") or parts.opaque:
        raise RedirectError("redirect_url must be an http or https URL")
    if parts.userinfo is not None or parts.fragment is not None:
        raise RedirectError("redirect_url must not carry user information (`@`) or a fragment (`#`)")
    if parts.path != "/callback":
        raise RedirectError("redirect_url's path must be exactly /callback")
    key = _secret_key(parts.query)
    host, address = _host(parts)
    port = _port(parts.port)
    netloc = (f"[{address}]" if address and address.version == 6 else host) + (f":{port}" if port else "")
    checked = ClientRedirect(f"{parts.scheme}://{netloc}/callback?secret_key={key.hex()}", key)
    if host in LOOPBACK_NAMES or address in LOOPBACK_ADDRESSES:
        return checked
    if address is not None and _in_cidrs(address, insecure_allowed_cidr_ranges):
        return checked
    if parts.scheme == "https" and port in (None, 443) and address is None \
            and matches_any(allowed_https_hostnames, host, ignore_case=True):
        return checked
    raise RedirectError(f"redirect_url's host `{host}` is not allowed: use localhost, 127.0.0.1 or ::1, or "
                        "add it to the connector's client_redirect_settings (allowed_https_hostnames for "
                        "https on port 443, insecure_allowed_cidr_ranges for IP addresses)")


def _secret_key(query: str | None) -> bytes:
    found = _SECRET_QUERY.fullmatch(query or "")
    if found is None:
        raise RedirectError("redirect_url's query must be exactly one secret_key of 64 hex digits")
    return bytes.fromhex(found.group(1))


def _host(parts: URL) -> tuple[str, ipaddress.IPv4Address | ipaddress.IPv6Address | None]:
    """The host as every reader sees it: a lower-case name, or an IP address written plainly."""
    host = parts.hostname.lower()
    if not host:
        raise RedirectError("redirect_url has no host")
    if parts.zone:
        raise RedirectError(f"redirect_url must not name an IPv6 zone (`%25…`): {_BROWSER_DIFFERS}")
    if "%" in host:
        raise RedirectError(f"redirect_url's host must not be percent-encoded: {_BROWSER_DIFFERS}")
    if ":" in host:
        return host, ipaddress.IPv6Address(host)  # parse_url checked the literal
    if _NUMERIC_LABEL.fullmatch(host.rsplit(".", 1)[-1]):
        try:
            address = ipaddress.IPv4Address(host)
        except ValueError:
            address = None
        if address is None or str(address) != host:
            raise RedirectError(f"redirect_url's host `{host}` is an IPv4 address written in a short, octal or hex "
                                "form; write its four decimal numbers, such as 127.0.0.1")
        return host, address
    if not _HOST_NAME.fullmatch(host):
        raise RedirectError(f"redirect_url's host `{host}` is not a plain host name (letters, digits, `-` and "
                            f"single dots, no trailing dot): {_BROWSER_DIFFERS}")
    return host, None


def _port(text: str) -> int | None:
    if not text:
        return None
    if len(text) > 5 or int(text) > 65535:
        raise RedirectError("redirect_url's port must be a number from 0 to 65535")
    return int(text)


def _in_cidrs(address: ipaddress.IPv4Address | ipaddress.IPv6Address, ranges: Sequence[str]) -> bool:
    for text in ranges:
        try:
            if address in ipaddress.ip_network(text, strict=False):
                return True
        except ValueError:
            continue  # the connector's validation reports a bad range; it allows nothing here
    return False


def choose_redirect_url(urls: Sequence[str], public_url: str | None) -> str:
    """The entry whose host and port match the public URL, else whose host does, else the first."""
    if len(urls) == 1 or not public_url:
        return urls[0]
    public = _host_port(public_url)
    for url in urls:
        if public[0] and _host_port(url) == public:
            return url
    for url in urls:
        if public[0] and _host_port(url)[0] == public[0]:
            return url
    return urls[0]


def _host_port(url: str) -> tuple[str, int | None]:
    """The lower-case host and the port (the scheme's default when none is written) as the strict
    parser reads them; ("", None) for what it refuses."""
    try:
        parts = parse_url(url)
    except URLError:
        return "", None
    if len(parts.port) > 5:
        return "", None  # no port is that long
    port = int(parts.port) if parts.port else {"https": 443, "http": 80}.get(parts.scheme)
    return parts.hostname.lower(), port


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL, normalised (host lowercased, default port dropped, never
    userinfo), or "" when it has none or the strict parser refuses it (a backslash, a bad escape):
    what the Origin check and the Graph next-page check compare, and what messages may name.
    """
    host, port = _host_port(url)
    if not host:
        return ""
    scheme = parse_url(url).scheme
    if ":" in host:
        host = f"[{host}]"
    default = {"https": 443, "http": 80}.get(scheme)
    return f"{scheme}://{host}" + (f":{port}" if port and port != default else "")
