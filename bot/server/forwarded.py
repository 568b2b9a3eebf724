"""The client's address behind a reverse proxy: `REVIEWER_TRUSTED_PROXIES` (docs/operations.md).

Any client can write `X-Forwarded-For`, so the header is believed only as far as the proxies the
operator names: starting from the address the connection comes from, each hop that is a trusted
proxy hands over to the address it says it saw (the header's last entry, then the one before, …);
the first address that is not a trusted proxy is the client — the rightmost untrusted hop. With no
trusted proxies (the default) the header is never read. The middleware puts that address in
`request.remote`, which the access log, the audit log and the sign-in log read, and which the
break-glass throttle counts by.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_HOPS = 32  # entries of the header read, from its end


def parse_trusted_proxies(text: str) -> tuple[Network, ...]:
    """A comma- (or space-) separated list of CIDRs or addresses (`10.0.0.0/8, 192.0.2.7`);
    ValueError names the first entry that is neither."""
    networks: list[Network] = []
    for entry in text.replace(",", " ").split():
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{entry[:64]!r} is not a CIDR (such as 10.0.0.0/8) or an IP address") from None
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        found = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(found, "ipv4_mapped", None)
    return mapped if mapped is not None else found


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address, proxies: Sequence[Network]) -> bool:
    return any(address.version == network.version and address in network for network in proxies)


def client_address(peer: str | None, forwarded_for: Iterable[str], proxies: Sequence[Network]) -> str | None:
    """The rightmost address, walking from `peer` back through `X-Forwarded-For`, that is not a
    trusted proxy; a hop that is not an address stops the walk at the last trusted proxy."""
    if not proxies or peer is None:
        return peer
    current = _address(peer)
    if current is None or not _trusted(current, proxies):
        return peer
    hops = [hop for value in forwarded_for for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops[-MAX_HOPS:]):
        address = _address(hop)
        if address is None:
            break
        current = address
        if not _trusted(current, proxies):
            break
    return str(current)


def trusted_proxies_middleware(proxies: Sequence[Network]) -> Middleware:
    @web.middleware
    async def with_client_address(request: web.Request, handler: Handler) -> web.StreamResponse:
        client = client_address(request.remote, request.headers.getall("X-Forwarded-For", []), proxies)
        if client is not None and client != request.remote:
            request = request.clone(remote=client)
        return await handler(request)
    return with_client_address
