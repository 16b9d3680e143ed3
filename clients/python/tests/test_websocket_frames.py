"""The websocket framing: what the client sends is a masked frame a server reads back, and
what a server sends (in pieces, fragmented, long) is read whole."""

from __future__ import annotations

import struct

from crossfill_client._websocket import (
    CLOSE,
    CONTINUATION,
    PING,
    TEXT,
    Frame,
    FrameReader,
    accept_key,
    encode_frame,
)


def _server_frame(opcode: int, payload: bytes, *, fin: bool = True) -> bytes:
    first = (0x80 if fin else 0) | opcode
    if len(payload) < 126:
        return struct.pack("!BB", first, len(payload)) + payload
    if len(payload) < 2**16:
        return struct.pack("!BBH", first, 126, len(payload)) + payload
    return struct.pack("!BBQ", first, 127, len(payload)) + payload


def test_a_client_frame_is_masked_and_reads_back() -> None:
    frame = encode_frame(TEXT, b'{"type":"subscribe"}', b"\x01\x02\x03\x04")
    assert frame[0] == 0x80 | TEXT and frame[1] & 0x80  # final, masked
    assert b"subscribe" not in frame
    assert FrameReader().feed(frame) == [Frame(True, TEXT, b'{"type":"subscribe"}')]


def test_lengths_of_every_width_read_back() -> None:
    for size in (0, 125, 126, 65535, 65536, 70000):
        payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
        (frame,) = FrameReader().feed(encode_frame(TEXT, payload, b"abcd"))
        assert frame.payload == payload


def test_frames_arriving_in_pieces_are_read_when_whole() -> None:
    data = _server_frame(TEXT, b"x" * 300) + _server_frame(PING, b"hi")
    reader = FrameReader()
    assert reader.feed(data[:1]) == [] and reader.feed(data[1:200]) == []
    assert reader.feed(data[200:]) == [Frame(True, TEXT, b"x" * 300), Frame(True, PING, b"hi")]


def test_fragments_and_close_frames_keep_their_opcodes() -> None:
    data = (
        _server_frame(TEXT, b"part one, ", fin=False)
        + _server_frame(CONTINUATION, b"part two")
        + _server_frame(CLOSE, struct.pack("!H", 1000))
    )
    frames = FrameReader().feed(data)
    assert [(frame.fin, frame.opcode) for frame in frames] == [
        (False, TEXT), (True, CONTINUATION), (True, CLOSE),
    ]  # fmt: skip


def test_accept_key_is_rfc_6455s() -> None:
    # The example of RFC 6455, section 1.3.
    assert accept_key("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
