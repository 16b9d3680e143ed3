"""A websocket client (RFC 6455) over an httpx connection, for the service's status stream:
text frames out (masked, as a client must), text frames in (fragmented or not), pings
answered, the close handshake. It needs nothing beyond httpx: the HTTP/1.1 upgrade is
httpx's (`network_stream`), the framing is here and pure (`encode_frame`, `FrameReader`).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

import httpcore
import httpx

_ACCEPT_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0
_READ_BYTES = 65536


class WebSocketUnavailable(Exception):
    """The stream could not be opened, or it closed or broke: the caller polls instead."""


class _NetworkStream(Protocol):
    """What httpx's `network_stream` extension offers after an upgrade."""

    # httpcore's signatures, `timeout` included.
    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes: ...  # noqa: ASYNC109

    async def write(self, buffer: bytes, timeout: float | None = None) -> None: ...  # noqa: ASYNC109


@dataclass(frozen=True)
class Frame:
    fin: bool
    opcode: int
    payload: bytes


def encode_frame(opcode: int, payload: bytes, mask: bytes) -> bytes:
    """One final frame, masked with the 4-byte `mask` (every client frame is masked)."""
    length = len(payload)
    if length < 126:
        header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
    elif length < 2**16:
        header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
    masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
    return header + mask + masked


class FrameReader:
    """Frames out of the bytes read so far (a frame may arrive in pieces)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames: list[Frame] = []
        while (frame := self._next()) is not None:
            frames.append(frame)
        return frames

    def _next(self) -> Frame | None:
        buffer = self._buffer
        if len(buffer) < 2:
            return None
        first, second = buffer[0], buffer[1]
        length, offset = second & 0x7F, 2
        if length == 126:
            if len(buffer) < 4:
                return None
            (length,), offset = struct.unpack_from("!H", buffer, 2), 4
        elif length == 127:
            if len(buffer) < 10:
                return None
            (length,), offset = struct.unpack_from("!Q", buffer, 2), 10
        mask = b""
        if second & 0x80:  # a server must not mask; read it anyway
            mask, offset = bytes(buffer[offset : offset + 4]), offset + 4
        if len(buffer) < offset + length:
            return None
        payload = bytes(buffer[offset : offset + length])
        if mask:
            payload = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        del buffer[: offset + length]
        return Frame(fin=bool(first & 0x80), opcode=first & 0x0F, payload=payload)


def accept_key(key: str) -> str:
    """The `Sec-WebSocket-Accept` a server must answer to `key`."""
    return base64.b64encode(hashlib.sha1(key.encode() + _ACCEPT_GUID).digest()).decode()


class WebSocket:
    """An open stream: `send_text`, `receive_text`, `close`."""

    def __init__(self, stream: _NetworkStream) -> None:
        self._stream = stream
        self._reader = FrameReader()
        self._pending: list[Frame] = []
        self._closed = False

    async def send_text(self, text: str) -> None:
        await self._write(TEXT, text.encode())

    async def receive_text(self, within: float) -> str:
        """The next text message (pings answered on the way); `TimeoutError` when none came
        `within` seconds, `WebSocketUnavailable` once the stream has closed."""
        parts: list[bytes] = []
        while True:
            frame = await self._next_frame(within)
            if frame.opcode == PING:
                await self._write(PONG, frame.payload)
            elif frame.opcode == CLOSE:
                self._closed = True
                raise WebSocketUnavailable(f"closed by the server: {frame.payload[2:]!r}")
            elif frame.opcode in (TEXT, CONTINUATION):
                parts.append(frame.payload)
                if frame.fin:
                    return b"".join(parts).decode()

    async def close(self) -> None:
        """The close handshake's first half (the connection is dropped after it)."""
        if not self._closed:
            self._closed = True
            with contextlib.suppress(WebSocketUnavailable):  # already gone: nothing to tell
                await self._write(CLOSE, struct.pack("!H", 1000))

    async def _next_frame(self, within: float) -> Frame:
        while not self._pending:
            try:
                data = await self._stream.read(_READ_BYTES, timeout=within)
            except httpcore.TimeoutException as exc:  # the upgraded stream is httpcore's
                raise TimeoutError from exc
            except (httpcore.NetworkError, httpcore.ProtocolError, OSError) as exc:
                raise WebSocketUnavailable(repr(exc)) from exc
            if not data:
                self._closed = True
                raise WebSocketUnavailable("the connection closed")
            self._pending.extend(self._reader.feed(data))
        return self._pending.pop(0)

    async def _write(self, opcode: int, payload: bytes) -> None:
        try:
            await self._stream.write(encode_frame(opcode, payload, os.urandom(4)))
        except (httpcore.NetworkError, httpcore.TimeoutException, OSError) as exc:
            raise WebSocketUnavailable(repr(exc)) from exc


@asynccontextmanager
async def connect(
    http: httpx.AsyncClient, path: str, params: dict[str, str]
) -> AsyncIterator[WebSocket]:
    """A websocket to `path` on `http`'s base URL, closed on leaving."""
    key = base64.b64encode(os.urandom(16)).decode()
    headers = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": key,
        "Sec-WebSocket-Version": "13",
    }
    try:
        async with http.stream("GET", path, params=params, headers=headers) as response:
            if response.status_code != 101:
                raise WebSocketUnavailable(f"upgrade refused: {response.status_code}")
            if response.headers.get("sec-websocket-accept") != accept_key(key):
                raise WebSocketUnavailable("the server's accept key does not match")
            socket = WebSocket(response.extensions["network_stream"])
            try:
                yield socket
            finally:
                await socket.close()
    except httpx.TransportError as exc:
        raise WebSocketUnavailable(repr(exc)) from exc
