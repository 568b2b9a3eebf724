"""URLs parsed as strictly as Go's net/url parses them, the parser Teleport reads connector URLs with.

Python's urllib accepts nearly anything (`https://%zz`, a space in the host, a port of letters);
Go's `url.Parse` refuses those, so a connector we accept must be one Teleport accepts too. The
rules, from Go's `net/url` (RFC 3986 with Go's own leniencies):
- no ASCII control character (below 0x20, or 0x7f) anywhere;
- a scheme is a letter, then letters, digits, `+`, `-`, `.`; a leading `:` is a missing scheme;
- every `%` in the userinfo, host, path and fragment starts a two-hex-digit escape (the query
  is kept raw, as Go keeps it); in the host an escape may only stand for a non-ASCII byte
  (or be `%25`, the zone separator of an IPv6 literal);
- the host holds letters, digits, `-._~`, the sub-delimiters `!$&'()*+,;=` and `<>"`, and
  non-ASCII; a space or another character is an invalid host character;
- a port is `:` and digits only; outside `[…]` the host has one colon at most (Go 1.25);
- `[…]` holds an IPv6 address, with an optional `%25zone`;
- userinfo holds unreserved characters, sub-delimiters, `:`, `%` and `@` only.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_HOST_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:[]<>\"")
_USERINFO_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:~!$&'()*+,;=%@")
_HEX = frozenset("0123456789abcdefABCDEF")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Text with no escape that needs no character-by-character look (the common case, checked in C).
_PLAIN_HOST = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:\[\]<>\"\u0080-\U0010ffff]*")


@dataclass(frozen=True)
class URL:
    scheme: str  # lower-cased, "" when none
    hostname: str  # without brackets or port; "" when the URL has no authority
    port: str  # digits, or ""
    path: str  # still escaped
    opaque: str  # `mailto:x` style: what follows the scheme when it is not `//…` or `/…`
    userinfo: str | None = None  # what precedes `@` in the authority; None: no `@`
    query: str | None = None  # raw, after `?`; None: no `?`
    fragment: str | None = None  # raw, after `#`; None: no `#`
    zone: str = ""  # an IPv6 literal's zone (after `%25`), still escaped


class URLError(ValueError):
    """Why Go's net/url refuses the text; the message quotes at most the offending characters."""


def parse_url(raw: str) -> URL:
    """The URL's parts, or URLError with Go's reason."""
    if _CONTROL.search(raw):
        raise URLError("has a control character (such as a newline or tab)")
    text, hash_mark, fragment = raw.partition("#")
    _unescape(fragment, "fragment")
    scheme, rest = _scheme(text)
    rest, question, query = rest.partition("?")
    ends = (query if question else None, fragment if hash_mark else None)
    if not rest.startswith("/") and scheme:
        return URL(scheme, "", "", "", rest, None, *ends)
    if not scheme and ":" in rest.partition("/")[0]:
        raise URLError("has a colon in its first path segment: is the scheme missing or misspelt?")
    hostname = port = zone = ""
    userinfo = None
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        userinfo, hostname, port, zone = _authority(authority)
    _unescape(rest, "path")
    return URL(scheme, hostname, port, rest, "", userinfo, *ends, zone)


def _scheme(text: str) -> tuple[str, str]:
    match = _SCHEME.match(text)
    if match and text[match.end():match.end() + 1] == ":":
        return match.group(0).lower(), text[match.end() + 1:]
    if text.startswith(":"):
        raise URLError("is missing its scheme (such as `https:`)")
    return "", text


def _authority(authority: str) -> tuple[str | None, str, str, str]:
    userinfo, at, host = authority.rpartition("@")
    if at:
        if any(c not in _USERINFO_SAFE for c in userinfo):
            raise URLError("has an invalid character in its user information (before `@`)")
        _unescape(userinfo, "user information")
    return (userinfo if at else None, *_host(host))


def _host(host: str) -> tuple[str, str, str]:
    if host.startswith("["):
        close = host.rfind("]")
        if close < 0:
            raise URLError("has an IPv6 host without its closing `]`")
        port = _port(host[close + 1:])
        literal, _, zone = host[1:close].partition("%25")
        try:
            ipaddress.IPv6Address(_unescape(literal, "host", host=True))
        except ValueError:
            raise URLError("has `[…]` around something that is not an IPv6 address") from None
        if zone:
            _unescape(zone, "host zone")
        return literal, port, zone
    name, colon, port_text = host.partition(":")
    if colon and ":" in port_text:
        raise URLError("has more than one colon in its host: an IPv6 address goes in brackets, `[::1]`")
    port = _port(colon + port_text)
    _unescape(name, "host", host=True)
    return name, port, ""


def _port(colon_port: str) -> str:
    if colon_port and (colon_port[0] != ":" or not colon_port[1:].isascii() or not all(
            c.isdigit() for c in colon_port[1:])):
        raise URLError(f"has an invalid port {colon_port[:20]!r} after the host: digits only")
    return colon_port[1:]


def _unescape(text: str, part: str, *, host: bool = False) -> str:
    """`text` with its escapes checked (the value is returned as written: only validity matters)."""
    if "%" not in text and (not host or _PLAIN_HOST.fullmatch(text)):
        return text
    index = 0
    while index < len(text):
        char = text[index]
        if char == "%":
            escape = text[index:index + 3]
            if len(escape) < 3 or escape[1] not in _HEX or escape[2] not in _HEX:
                raise URLError(f"has an invalid escape {escape!r} in its {part}: `%` must be followed by "
                               "two hexadecimal digits (write `%25` for a literal `%`)")
            if host and int(escape[1], 16) < 8 and escape != "%25":
                raise URLError(f"has an escape {escape!r} in its host: a host may escape only non-ASCII bytes")
            index += 3
            continue
        if host and char.isascii() and char not in _HOST_SAFE:
            raise URLError(f"has an invalid character {char!r} in its host")
        index += 1
    return text
