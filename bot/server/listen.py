"""Where the server listens: `REVIEWER_HOST` / `--host` (default every IPv4 address).

`0.0.0.0` suits a container or a machine behind a proxy; `127.0.0.1` keeps the server to this
machine (a sidecar proxy in front); `::` listens on every IPv6 address (asyncio opens IPv6
sockets IPv6-only, so an IPv4 client does not reach `::`); a host name listens on the addresses
it resolves to. `reviewer serve`, `reviewer worker` and `reviewer setup` read it alike.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Mapping

from aiohttp import web

DEFAULT_HOST = "0.0.0.0"
BACKLOG = 128  # as aiohttp's sites ask
# RFC 1123 host names: labels of letters, digits and inner hyphens, dot separated
_HOSTNAME = re.compile(r"(?=.{1,253}\Z)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?")


def host_problem(text: str) -> str | None:
    """Why `text` cannot be listened on, or None (pure: no name is resolved here)."""
    candidate = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        ipaddress.ip_address(candidate)
        return None
    except ValueError:
        pass
    if _HOSTNAME.fullmatch(text) and not text.replace(".", "").isdigit():
        return None
    return (f"{text!r} is not an IP address or a host name: give the address to listen on, such as "
            "0.0.0.0 (every IPv4 address, the default), :: (every IPv6 address) or 127.0.0.1 (this machine only)")


def normalise(text: str) -> str:
    """The form asyncio binds: an IPv6 literal without the brackets a URL puts around it."""
    return text[1:-1] if text.startswith("[") and text.endswith("]") else text


def resolve_host(flag: str | None, values: Mapping[str, str], problems: list[str]) -> str:
    """`--host` wins over REVIEWER_HOST; either must be an address or a host name."""
    key, text = ("--host", flag) if flag is not None else ("REVIEWER_HOST", values.get("REVIEWER_HOST"))
    if text is None:
        return DEFAULT_HOST
    text = text.strip()
    problem = host_problem(text)
    if problem is not None:
        problems.append(f"{key}: {problem}")
        return DEFAULT_HOST
    return normalise(text)


def url_host(host: str) -> str:
    """The host as a URL writes it: brackets around an IPv6 literal."""
    return f"[{host}]" if ":" in host else host


class ListenError(Exception):
    """The port cannot be listened on (in use, not permitted); the message says which and why."""


def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets on `host`:`port`, one per address the host stands for, as asyncio's
    `create_server` binds them (SO_REUSEADDR, IPv6 sockets IPv6-only); ListenError says why not, in
    one line. Bound before the app starts, so that a port in use is said before anything else is
    (the store opened, "server started" logged) and nothing has to be undone."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:  # a host name that does not resolve
        raise ListenError(_cannot(host, port, exc.strerror or str(exc))) from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in {(i[0], i[4]): i for i in infos}.values():
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(BACKLOG)
            sock.setblocking(False)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise ListenError(_cannot(host, port, os.strerror(exc.errno) if exc.errno else str(exc))) from None
    return sockets


def _cannot(host: str, port: int, reason: str) -> str:
    where = "" if host == DEFAULT_HOST else f" of {host} (REVIEWER_HOST)"
    return f"cannot listen on port {port} (PORT){where}: {reason}"


async def start_site(runner: web.AppRunner, sockets: list[socket.socket]) -> None:
    """Serve `runner`'s app on the sockets `bind` made (the runner set up after them)."""
    for sock in sockets:
        await web.SockSite(runner, sock).start()
