"""The address a request (or websocket) comes from, and the group per-address limits count it
in (`client_group`: an IPv6 address's /64).

`X-Forwarded-For` is anyone's to write: it is believed only when the connection's peer is one
of the configured trusted proxies (`CROSSFILL_TRUSTED_PROXIES`). Each proxy appends the address
it was connected from, so reading from the right, the first address that is not a trusted
proxy is the client; what the client itself put further left is ignored. uvicorn's own
proxy-header rewriting is off (`process/server.py`), so the peer seen here is the socket's.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

import structlog
from starlette.requests import HTTPConnection

log = structlog.get_logger(__name__)

FORWARDED_FOR = "x-forwarded-for"
UNKNOWN = "unknown"
# A hop that is not an IP address is kept as text (it is still what a trusted proxy said),
# but bounded: it becomes part of a rate-limit bucket's name.
_MAX_ADDRESS_LENGTH = 64

Networks = Sequence[IPv4Network | IPv6Network]
# An IPv6 subscriber is given a /64 at least, and a host picks any address in it at will
# (privacy extensions): per-address limits hold for the whole /64.
IPV6_CLIENT_PREFIX = 64


def client_address(connection: HTTPConnection, trusted_proxies: Networks) -> str:
    """The client's address: the peer, or behind trusted proxies the right-most untrusted
    `X-Forwarded-For` hop (the left-most hop when every one of them is a trusted proxy)."""
    peer = connection.client.host if connection.client else UNKNOWN
    if not trusted_proxies:
        UNTRUSTED_PROXY.saw(peer)
    if not _is_trusted(peer, trusted_proxies):
        return _canonical(peer)
    hops = [
        hop.strip()
        for header in connection.headers.getlist(FORWARDED_FOR)
        for hop in header.split(",")
        if hop.strip()
    ]
    for hop in reversed(hops):
        if not _is_trusted(hop, trusted_proxies):
            return _canonical(hop)
    return _canonical(hops[0] if hops else peer)


class UntrustedProxyWarning:
    """Warns once per process when a request comes from a private address while no proxy is
    trusted. A proxy in front (a load balancer, nginx on this host) is then every client's
    peer: all share its address, its rate limits and its wrong-secret budget, so one client
    guessing API keys or the operator token locks every key holder out."""

    def __init__(self) -> None:
        self.warned = False

    def saw(self, peer: str) -> None:
        if self.warned:
            return
        parsed = _parse(peer)
        if parsed is None or not parsed.is_private:
            return
        self.warned = True
        log.warning(
            "request from a private address and no trusted proxy: if a proxy forwards the "
            "requests, set CROSSFILL_TRUSTED_PROXIES, or every client shares its limits",
            peer=str(parsed),
        )


# One per process: the warning is said once.
UNTRUSTED_PROXY = UntrustedProxyWarning()


def client_group(address: str) -> str:
    """What per-address limits count `address` (as `client_address` gives it) as: an IPv6
    address's /64 network, any other address (IPv4, or text a proxy sent) as it is."""
    parsed = _parse(address)
    if not isinstance(parsed, IPv6Address):
        return address
    return str(IPv6Network((parsed, IPV6_CLIENT_PREFIX), strict=False))


def _is_trusted(address: str, trusted_proxies: Networks) -> bool:
    parsed = _parse(address)
    return parsed is not None and any(parsed in network for network in trusted_proxies)


def _canonical(address: str) -> str:
    """One spelling per address: `::ffff:1.2.3.4` (IPv4 on a dual-stack socket), `1.2.3.4`
    and `0:0::ffff:1.2.3.4` share a bucket."""
    parsed = _parse(address)
    return address[:_MAX_ADDRESS_LENGTH] if parsed is None else str(parsed)


def _parse(address: str) -> IPv4Address | IPv6Address | None:
    # Longer than any IP address is written (45 characters, a short zone): text, not parsed,
    # and never kept in `_parsed`'s cache (a hop is whatever a client put in a header).
    return _parsed(address) if len(address) <= _MAX_ADDRESS_LENGTH else None


@lru_cache(maxsize=4096)
def _parsed(address: str) -> IPv4Address | IPv6Address | None:
    """The address parsed (kept for the next request: the same peers come again and again;
    the parsed addresses are immutable)."""
    try:
        parsed = ip_address(address)
    except ValueError:
        return None
    if isinstance(parsed, IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped
    return parsed
