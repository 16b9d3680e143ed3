"""Hostile clients that send too slowly: a connection that never finishes its request's headers
or body is answered 408 in the error shape and closed, so it holds no socket, task or stop;
a slow client within the deadlines, and a websocket, are served as usual."""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import socket
import time

import pytest
from websockets.asyncio.client import connect

from tests.support.service import ServiceThread, StartService

HEADERS_WITHIN = 0.6
BODY_WITHIN = 0.8
QUOTE_HEAD = (
    b"POST /quote/v2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: 40\r\n\r\n"
)


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(
        settings={
            "request_header_timeout_seconds": HEADERS_WITHIN,
            "request_body_timeout_seconds": BODY_WITHIN,
        }
    )


def _connect(service: ServiceThread) -> socket.socket:
    return socket.create_connection(("127.0.0.1", service.port), timeout=10)


def _until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and how long that took."""
    started, raw = time.monotonic(), b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            raw += chunk
    return raw, time.monotonic() - started


def _error(raw: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"content-type: application/json" in head.lower(), head
    return int(head.split(b" ", 2)[1]), json.loads(body)


def _response(sock: socket.socket) -> bytes:
    """One whole response on a connection the server keeps open (its Content-Length)."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        raw += sock.recv(65536)
    head, _, body = raw.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _silent_for(sock: socket.socket, seconds: float) -> bool:
    readable, _, _ = select.select([sock], [], [], seconds)
    return not readable


def test_a_connection_that_sends_nothing_is_closed_without_an_answer(service) -> None:
    with _connect(service) as sock:
        raw, took = _until_closed(sock)
    assert raw == b""
    assert HEADERS_WITHIN * 0.9 <= took < HEADERS_WITHIN + 5


def test_headers_not_finished_in_time_are_answered_408(service) -> None:
    with _connect(service) as sock:
        sock.sendall(b"POST /quote/v2 HTTP/1.1\r\nHost: x\r\n")
        raw, took = _until_closed(sock)
    status, body = _error(raw)
    assert status == 408 and body["statusCode"] == 408
    assert body["errorCode"] == "REQUEST_TIMEOUT"  # a quote path always carries one
    assert took < HEADERS_WITHIN + 5


def test_a_body_not_finished_in_time_is_answered_408_and_the_service_goes_on(service) -> None:
    with _connect(service) as stalled:
        stalled.sendall(QUOTE_HEAD + b'{"user": "0x')
        raw, took = _until_closed(stalled)
    status, body = _error(raw)
    assert (status, body["errorCode"]) == (408, "REQUEST_TIMEOUT")
    assert BODY_WITHIN * 0.9 <= took < BODY_WITHIN + 5
    with _connect(service) as other:
        other.sendall(b"GET /chains HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer, _ = _until_closed(other)
    assert answer.startswith(b"HTTP/1.1 200 ")


def test_a_kept_alive_connections_next_request_has_its_own_deadline(service) -> None:
    with _connect(service) as sock:
        sock.sendall(b"GET /chains HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _response(sock).startswith(b"HTTP/1.1 200 ")
        sock.sendall(b"GET /requests/v3 HTTP/1.1\r\nHost: x\r\n")
        raw, _ = _until_closed(sock)
    status, body = _error(raw)
    assert status == 408 and "errorCode" not in body  # not a quote path


def test_a_slow_client_within_the_deadlines_is_served(service) -> None:
    """Headers in three pieces and the body in two, each inside its deadline: an ordinary
    answer (here 400, the body's fields being wrong), not a 408."""
    body = b'{"user": "0x00", "amount": "1", "x": 1}X'
    assert len(body) == 40
    with _connect(service) as sock:
        for piece in (QUOTE_HEAD[:20], QUOTE_HEAD[20:60], QUOTE_HEAD[60:]):
            sock.sendall(piece)
            time.sleep(HEADERS_WITHIN / 4)
        for piece in (body[:20], body[20:]):
            sock.sendall(piece)
            time.sleep(BODY_WITHIN / 4)
        status, answer = _error(_response(sock))
    assert status == 400 and answer["errorCode"] != "REQUEST_TIMEOUT"


def test_a_websocket_is_not_held_to_the_request_deadlines(service) -> None:
    async def session() -> dict[str, object]:
        url = service.base_url.replace("http://", "ws://") + "/ws"
        async with connect(url) as socket_:
            ready = json.loads(await socket_.recv())
            await asyncio.sleep(HEADERS_WITHIN + BODY_WITHIN + 0.5)
            await socket_.send(json.dumps({"type": "subscribe", "event": "nothing"}))
            reply: dict[str, object] = json.loads(await socket_.recv())
            return {"ready": ready, "reply": reply}

    replies = asyncio.run(session())
    assert replies["ready"] == {
        "type": "connection",
        "status": "ready",
        "data": {"id": replies["ready"]["data"]["id"]},  # type: ignore[index]
    }
    assert replies["reply"]["type"] == "subscribe"  # type: ignore[index]
    assert replies["reply"]["status"] == "error"  # type: ignore[index]


def test_a_stalled_request_does_not_keep_the_service_from_stopping(
    start_service: StartService,
) -> None:
    """The body deadline far away: the stop's own grace ends the request."""
    service = start_service(settings={"request_body_timeout_seconds": 600})
    with _connect(service) as stalled:
        stalled.sendall(QUOTE_HEAD + b"{")
        assert _silent_for(stalled, 0.5)
        started = time.monotonic()
        service.stop()
        assert not service.thread.is_alive()
    assert time.monotonic() - started < 10
