"""Request size limits, checked before any route runs (a pure ASGI middleware).

Headers: at most `max_header_count`, `max_header_bytes` in all and `max_header_line_bytes` in
one (name plus value) → 431. Body: a `Content-Length` over `max_body_bytes` → 413 at once,
without reading the body; a chunked (or understated) body is counted as it arrives and
refused with 413 as soon as it passes the limit, so it is never buffered whole.

Behind uvicorn's httptools parser the headers have been parsed by the time this runs (uvicorn
has no header limit for httptools); `uvicorn_limits` sets the limits uvicorn does have, and
the connection protocol (`api.http_protocol`): deadlines for slow clients, and what httptools
cannot parse (a bad byte, a URL it refuses: ~64 KiB here) answered as a 400 in the error
shape instead of uvicorn's text/plain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from crossfill.api.errors import error_body
from crossfill.api.http_protocol import RequestDeadlines
from crossfill.settings import Settings


@dataclass(frozen=True)
class RequestLimits:
    max_body_bytes: int
    max_header_count: int
    max_header_bytes: int
    max_header_line_bytes: int

    @classmethod
    def from_settings(cls, settings: Settings) -> RequestLimits:
        return cls(
            max_body_bytes=settings.max_request_body_bytes,
            max_header_count=settings.max_request_header_count,
            max_header_bytes=settings.max_request_header_bytes,
            max_header_line_bytes=settings.max_request_header_line_bytes,
        )

    def header_problem(self, headers: list[tuple[bytes, bytes]]) -> str | None:
        """Why these headers are refused, or None when they are within the limits."""
        if len(headers) > self.max_header_count:
            return f"Too many request headers: at most {self.max_header_count} are accepted"
        total = 0
        for name, value in headers:
            size = len(name) + len(value)
            if size > self.max_header_line_bytes:
                return (
                    f"Request header {name[:64].decode('latin-1')!r} is too large: "
                    f"at most {self.max_header_line_bytes} bytes per header"
                )
            total += size
        if total > self.max_header_bytes:
            return f"Request headers are too large: at most {self.max_header_bytes} bytes in all"
        return None

    def body_too_large_message(self) -> str:
        return f"Request body is too large: at most {self.max_body_bytes} bytes are accepted"


class BodyTooLarge(HTTPException):
    """Raised from `receive` when a streamed body passes the limit. An HTTPException, so
    FastAPI's body reading passes it on (it turns other exceptions into 400s) and the error
    handlers answer it in the error shape. The answer closes the connection: the rest of the
    body is never read, and a connection kept open would let the client stream on into it."""

    def __init__(self, message: str) -> None:
        super().__init__(status_code=413, detail=message, headers={"connection": "close"})


def uvicorn_limits(settings: Settings) -> dict[str, Any]:
    """The uvicorn.Config options that bound what a client can make the server hold: the
    connection protocol with its deadlines for slow clients (`api.http_protocol`), and the
    sizes uvicorn itself checks."""
    return {
        "http": RequestDeadlines.from_settings(settings).protocol(),
        # Only the h11 parser has one (unused with the protocol above); the middleware below
        # checks the headers httptools parsed.
        "h11_max_incomplete_event_size": settings.max_request_header_bytes,
        # A frame over the websocket's own limit is refused (1009) as its header arrives.
        "ws_max_size": settings.ws_max_message_bytes,
    }


def _declared_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name.lower() == b"content-length":
            return int(value) if value.strip().isdigit() else None
    return None


class RequestLimitsMiddleware:
    """Refuses oversized requests in the error shape (`errorCode` on quote paths)."""

    def __init__(self, app: ASGIApp, limits: RequestLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        problem = self.limits.header_problem(scope["headers"])
        if problem is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": problem[:120]})
            else:
                await _refuse(send, scope, 431, problem)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope["headers"])
        if declared is not None and declared > self.limits.max_body_bytes:
            await _refuse(send, scope, 413, self.limits.body_too_large_message())
            return
        await self._counted(scope, receive, send)

    async def _counted(self, scope: Scope, receive: Receive, send: Send) -> None:
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limits.max_body_bytes:
                    raise BodyTooLarge(self.limits.body_too_large_message())
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except BodyTooLarge as exc:
            # Read outside FastAPI's handlers (a route reading `request.stream()` itself).
            if started:
                raise
            await _refuse(send, scope, 413, str(exc.detail))


async def _refuse(send: Send, scope: Scope, status: int, message: str) -> None:
    body = error_body(scope["path"], status, message)
    payload = json.dumps(body, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
