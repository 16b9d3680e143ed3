"""A stop that drains (`CROSSFILL_DRAIN_SECONDS`): asked to stop, an API process first goes
unready for that long while it goes on serving, so a load balancer that probes `/readyz`
stops sending it new connections before its listener closes (`process.server` starts the
drain and ends it).

While it drains, `/readyz` answers 503 (`checks.draining`), and every answer asks the client
to close its connection (`Connection: close`): a client on a kept-alive connection through a
balancer that forwards whole connections opens a new one, which the balancer sends to a
process that is not stopping. A request under way when the drain ends still finishes
(uvicorn's graceful shutdown, `process.server.SHUTDOWN_GRACE_SECONDS`).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class Drain:
    """Whether this process is draining."""

    def __init__(self) -> None:
        self.active = False

    def start(self) -> None:
        self.active = True


class CloseWhileDraining:
    """ASGI middleware: while `drain` is active, each HTTP answer says `Connection: close`."""

    def __init__(self, app: ASGIApp, drain: Drain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.drain.active:
            await self.app(scope, receive, send)
            return

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [
                    (name, value)
                    for name, value in message.get("headers", [])
                    if name.lower() != b"connection"
                ]
                message = {**message, "headers": [*kept, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receive, closing)
