"""Where a webhook delivery connects, when only public addresses may receive webhooks
(production, unless `CROSSFILL_WEBHOOK_ALLOW_PRIVATE` is set).

The endpoint's URL was checked when it was set, but its name may resolve elsewhere by the
time a delivery goes out: a receiver's DNS re-pointed at 127.0.0.1, a cloud metadata address
or the operator's own network (DNS rebinding) would have had the service POST there. So each
delivery resolves the name again, checks every address as the endpoint was checked
(`crossfill.domain.webhook_url`), and connects to the first of the addresses it checked:
the request's URL carries that address, its Host header the name, and over https the TLS
handshake the name too (httpx's `sni_hostname` extension: the server's certificate is
verified against the name, not the address). Nothing resolves the name a second time
between the check and the connection.

A name's checked address is kept for `TTL_SECONDS`. Each name has its own HTTP client: a
pool knows a connection by the address it went to, so names sharing an address (receivers
behind one CDN) would otherwise share a kept-alive connection whose TLS session was made for
one of them, and the others' deliveries would go out under that name's handshake (a CDN
answers 421 to a Host that is not its SNI).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import httpx

from crossfill.domain.webhook_url import EndpointRefused, check_addresses

# A name → its addresses (the system's resolver, or a test's).
Resolve = Callable[[str], Awaitable[list[str]]]
# A name and its addresses → EndpointRefused unless they may receive webhooks.
Check = Callable[[str, Sequence[str]], None]

TTL_SECONDS = 30.0
MAX_NAMES = 1000


def resolved_addresses(host: str) -> list[str]:
    """The addresses the system's resolver gives `host`, in its order of preference (DNS:
    blocks while it asks); EndpointRefused if it does not resolve."""
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise EndpointRefused(f"host {host!r} does not resolve") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in found))


async def system_resolve(host: str) -> list[str]:
    """`resolved_addresses` on a thread, the event loop not waiting on DNS."""
    return await asyncio.to_thread(resolved_addresses, host)


@dataclass
class PinnedDestinations:
    # A new HTTP client (the dispatcher's timeouts and limits), made for each name.
    new_client: Callable[[], httpx.AsyncClient]
    resolve: Resolve = system_resolve
    check: Check = check_addresses
    _checked: dict[str, tuple[float, str]] = field(default_factory=dict)
    _clients: dict[str, httpx.AsyncClient] = field(default_factory=dict)

    async def send(self, request: httpx.Request) -> httpx.Response:
        """`request` sent to a checked address of its host, on the host's own client; the
        answer streamed (the caller closes it). EndpointRefused if no address may be used."""
        pinned = await self._pin(request)
        client = self._clients.get(request.url.host)
        if client is None:
            if len(self._clients) >= MAX_NAMES:
                # Thousands of receivers' names: start over rather than grow (a delivery
                # under way on a closed client fails, and is retried).
                await self.aclose()
            client = self._clients[request.url.host] = self.new_client()
        return await client.send(pinned, stream=True)

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    async def _pin(self, request: httpx.Request) -> httpx.Request:
        """`request` addressed to an address its host resolves to and that passed the
        check, under its host's name; EndpointRefused if none may be used."""
        host = request.url.host
        try:
            ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            self.check(host, [host])  # an address in the URL: nothing to resolve
            return request
        address = await self._checked_address(host)
        pinned = httpx.Request(
            request.method,
            request.url.copy_with(host=address),
            headers=request.headers,  # Host: the name, as built from the endpoint's URL
            stream=request.stream,
            extensions={**request.extensions, "sni_hostname": host},
        )
        return pinned

    async def _checked_address(self, host: str) -> str:
        now = time.monotonic()
        kept = self._checked.get(host)
        if kept is not None and now - kept[0] < TTL_SECONDS:
            return kept[1]
        addresses = await self.resolve(host)
        self.check(host, addresses)
        if len(self._checked) >= MAX_NAMES:
            self._checked.clear()
        self._checked[host] = (now, addresses[0])
        return addresses[0]
