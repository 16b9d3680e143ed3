"""What one websocket client may cost: connections per address, frame size and kind, and a
message rate per connection. Breaking a limit closes the socket with a code that says which.

These bound memory: every subscription, queued reply and buffered frame is held by the
process, and the stream is open to unauthenticated clients.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from fastapi import WebSocket

from crossfill.settings import Settings

# Close codes (RFC 6455 section 7.4.1).
POLICY_VIOLATION = 1008
UNSUPPORTED_DATA = 1003
MESSAGE_TOO_BIG = 1009
TRY_AGAIN_LATER = 1013
# A client still sending after this many refused messages in a row is not slowing down.
REFUSALS_BEFORE_CLOSE = 10


class CloseSocket(Exception):
    """The connection must end with this close code and reason."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(code, reason)
        self.code = code
        self.reason = reason


class ConnectionsByAddress:
    """Open websocket connections per client address, in this process."""

    def __init__(self) -> None:
        self._open: Counter[str] = Counter()

    def enter(self, address: str, limit: int) -> bool:
        """Count a new connection from `address`; False (and not counted) when it already
        holds `limit` connections."""
        if self._open[address] >= limit:
            return False
        self._open[address] += 1
        return True

    def leave(self, address: str) -> None:
        self._open[address] -= 1
        if self._open[address] <= 0:
            del self._open[address]


@dataclass
class MessageBucket:
    """A token bucket for one connection's messages: `burst` at once, `per_second` after."""

    per_second: float
    burst: int
    tokens: float = field(init=False)
    at: float = field(default_factory=time.monotonic)
    refused_in_a_row: int = 0

    def __post_init__(self) -> None:
        self.tokens = float(self.burst)

    def take(self) -> bool:
        """Take one token; False when there is none. Raises CloseSocket once a client has
        kept sending past `REFUSALS_BEFORE_CLOSE` refusals."""
        now = time.monotonic()
        self.tokens = min(float(self.burst), self.tokens + (now - self.at) * self.per_second)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            self.refused_in_a_row = 0
            return True
        self.refused_in_a_row += 1
        if self.refused_in_a_row > REFUSALS_BEFORE_CLOSE:
            raise CloseSocket(POLICY_VIOLATION, "message rate limit exceeded")
        return False


async def receive_text(websocket: WebSocket, settings: Settings) -> str | None:
    """The next text message, or None once the client has gone. Raises CloseSocket for a
    binary frame or a frame over `ws_max_message_bytes`."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        return None
    text: str | None = message.get("text")
    if text is None:
        raise CloseSocket(UNSUPPORTED_DATA, "binary frames are not supported: send JSON text")
    limit = settings.ws_max_message_bytes
    # A character is at least one byte: only a short text needs encoding to be measured.
    if len(text) > limit or len(text.encode()) > limit:
        raise CloseSocket(MESSAGE_TOO_BIG, f"messages are limited to {limit} bytes")
    return text
