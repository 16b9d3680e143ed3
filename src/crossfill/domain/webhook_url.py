"""Which webhook endpoints may be configured.

Always http(s) with a host. In production: https only, and no loopback, private, link-local,
multicast or otherwise non-public address (by IP literal or by what the name resolves to
now), unless `CROSSFILL_WEBHOOK_ALLOW_PRIVATE` is set. An IPv6 address that carries an IPv4
one (mapped, compatible, translated, 6to4, Teredo, NAT64 64:ff9b::/96) is judged by that IPv4
address too, since the packets end up there; the local-use NAT64 prefix 64:ff9b:1::/48 is
never public. DNS may change later: deliveries resolve the name again and check what it
resolves to then, and connect to the address they checked (`crossfill.webhooks.destination`),
so a name re-pointed at a private address after it was set (DNS rebinding) is refused at
delivery.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit


class EndpointRefused(ValueError):
    """The endpoint is not allowed; the message says why."""


# RFC 6052 well-known NAT64 prefix: the IPv4 address is the last 32 bits.
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
# RFC 8215 local-use NAT64 prefix: translates to whatever the local network chose; not public.
NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")
# IPv4-compatible (RFC 4291, deprecated) and IPv4-translated (RFC 2765): the last 32 bits too.
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
LAST_32_BITS_IPV4 = (NAT64_WELL_KNOWN, IPV4_COMPATIBLE, IPV4_TRANSLATED)


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address stands for (none for a native IPv6 address)."""
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)  # (server, client), the client already de-obfuscated
    if any(address in network for network in LAST_32_BITS_IPV4):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF))
    return found


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    # Python counts multicast groups (224.0.0.0/4, ff00::/8) as global: a group is no host.
    return address.is_global and not address.is_multicast


def _non_public_reason(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if address.is_multicast:
        return f"{address}, multicast"
    if not address.is_global:
        return str(address)
    if isinstance(address, ipaddress.IPv6Address):
        if address in NAT64_LOCAL_USE:
            return f"{address}, local-use NAT64"
        for inner in embedded_ipv4(address):
            if not _is_public(inner):
                return f"{address}, which carries {inner}"
    return None


def check_endpoint(
    url: str,
    *,
    production: bool,
    allow_private: bool,
    resolve: Callable[[str], list[str]] | None = None,
) -> str:
    """`url` if it may receive webhooks; EndpointRefused why not. In production a host name
    is resolved with `resolve` (the caller's I/O: host name → addresses, EndpointRefused if
    it does not resolve) and every address must be public."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointRefused("the webhook endpoint must be an http(s) URL with a host")
    if not production or allow_private:
        return url
    if parts.scheme != "https":
        raise EndpointRefused("production webhooks must use https")
    host = parts.hostname
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        if resolve is None:
            raise EndpointRefused(f"host {host!r} cannot be checked without a resolver") from None
        addresses = resolve(host)
    check_addresses(host, addresses)
    return url


def check_addresses(host: str, addresses: Sequence[str]) -> None:
    """EndpointRefused unless `host` has addresses and every one of them is public."""
    if not addresses:
        raise EndpointRefused(f"host {host!r} does not resolve")
    for address in addresses:
        reason = _non_public_reason(ipaddress.ip_address(address.split("%")[0]))
        if reason is not None:
            raise EndpointRefused(f"{host} is a private or local address ({reason})")
