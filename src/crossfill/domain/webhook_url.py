"""Which webhook endpoints may be configured.

Always http(s) with a host. In production: https only, and no loopback, private, link-local
or otherwise non-public address (by IP literal or by what the name resolves to now), unless
`CROSSFILL_WEBHOOK_ALLOW_PRIVATE` is set. DNS may change later; this check stops mistakes and
casual abuse, not a determined DNS-rebinding attacker.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit


class EndpointRefused(ValueError):
    pass


def _addresses(host: str) -> list[str]:
    try:
        return [str(info[4][0]) for info in socket.getaddrinfo(host, None)]
    except OSError as exc:
        raise EndpointRefused(f"host {host!r} does not resolve") from exc


def check_endpoint(
    url: str,
    *,
    production: bool,
    allow_private: bool,
    resolve: Callable[[str], list[str]] = _addresses,
) -> str:
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
        addresses = resolve(host)
    for address in addresses:
        if not ipaddress.ip_address(address.split("%")[0]).is_global:
            raise EndpointRefused(f"{host} is a private or local address ({address})")
    return url
