"""The HTTP connection protocol the API serves with: uvicorn's httptools protocol, bounded
against clients that send too slowly, answering in the error shape.

- **Deadlines.** uvicorn closes a keep-alive connection left idle after a response, but waits
  for ever for a request's first bytes, the rest of its headers, or the rest of its body. Each
  such connection would hold a socket (and, once its headers are in, a task) until the client
  leaves: a few thousand of them exhaust the process's file descriptors, and one of them kept
  a stopping service from exiting (uvicorn waits for open requests). Here a connection must
  deliver a request's headers within `header_seconds` of opening (or of the request's first
  byte, on a kept-alive connection) and its body within `body_seconds` of its headers; past
  that it is answered 408 in the error shape (closed silently if it sent nothing) and closed.
- **Unparsable requests** (a bad byte in the request line or a header, a URL httptools
  refuses) are answered 400 in the error shape, not in uvicorn's text/plain.
"""

from __future__ import annotations

import asyncio
import functools
import json
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from crossfill.api.errors import error_body
from crossfill.settings import Settings


@dataclass(frozen=True)
class RequestDeadlines:
    header_seconds: float
    body_seconds: float

    @classmethod
    def from_settings(cls, settings: Settings) -> RequestDeadlines:
        return cls(
            header_seconds=settings.request_header_timeout_seconds,
            body_seconds=settings.request_body_timeout_seconds,
        )

    def protocol(self) -> functools.partial[BoundedHttpProtocol]:
        """What uvicorn's `http` option takes: it builds one protocol per connection."""
        return functools.partial(BoundedHttpProtocol, deadlines=self)


class BoundedHttpProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, deadlines: RequestDeadlines, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadlines = deadlines
        self._deadline: asyncio.TimerHandle | None = None
        self._request_begun = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self._deadlines.header_seconds)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._request_begun = True
        if self._deadline is None:  # a kept-alive connection's next request
            self._arm(self._deadlines.header_seconds)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._disarm()
        if not (self.parser.should_upgrade() and self._should_upgrade()):
            self._arm(self._deadlines.body_seconds)  # (a websocket's frames are bounded apart)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()
        self._request_begun = False

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        super().handle_websocket_upgrade()

    def send_400_response(self, msg: str) -> None:
        self._answer_and_close(400, "Bad Request", msg, path="")

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle  # the request's, or (its headers still coming) the one before
        answering = cycle is not None and cycle.response_started and not cycle.response_complete
        if not self._request_begun or answering:
            self.transport.close()
            return
        path = self.url.partition(b"?")[0].decode("latin-1")
        self._answer_and_close(408, "Request Timeout", "The request was not sent in time", path)

    def _answer_and_close(self, status: int, reason: str, message: str, path: str) -> None:
        """A whole response written straight to the socket (no app runs), then closed; the
        app's task for this request, if any, then reads a disconnect."""
        payload = json.dumps(error_body(path, status, message)).encode()
        head = [f"HTTP/1.1 {status} {reason}\r\n".encode()]
        defaults = self.server_state.default_headers
        head += [name + b": " + value + b"\r\n" for name, value in defaults]
        head += [
            b"content-type: application/json\r\n",
            b"content-length: " + str(len(payload)).encode() + b"\r\n",
            b"connection: close\r\n\r\n",
        ]
        self.transport.write(b"".join(head) + payload)
        self.transport.close()
