"""Hostile clients: oversized bodies are 413 and oversized headers 431, in the error shape."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time

import httpx
import pytest

from tests.support.service import ServiceThread, StartService

LIMIT = 256 * 1024


def _error(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text
    body: dict[str, object] = response.json()
    assert body["statusCode"] == status and isinstance(body["message"], str)
    return body


def _connect(service: ServiceThread) -> socket.socket:
    return socket.create_connection(("127.0.0.1", service.port), timeout=10)


def _read_response(sock: socket.socket) -> tuple[int, dict[str, object]]:
    """Status and JSON body of one HTTP/1.1 response (the server closes after it; closing
    with a body still arriving resets the connection once the answer is out)."""
    raw = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def _answered(sock: socket.socket) -> bool:
    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


def test_a_declared_body_over_the_limit_is_413_before_it_is_sent(service) -> None:
    with _connect(service) as sock:
        sock.sendall(
            b"POST /quote/v2 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 52428800\r\n\r\n{"
        )
        started = time.monotonic()
        status, body = _read_response(sock)
    assert time.monotonic() - started < 5
    assert status == 413 and body["statusCode"] == 413
    assert body["errorCode"] == "REQUEST_TOO_LARGE"
    assert str(LIMIT) in str(body["message"])


def test_a_body_over_the_limit_is_413_with_the_quote_error_code(client) -> None:
    response = client.post("/quote/v2", content=b"x" * (LIMIT + 1))
    assert _error(response, 413)["errorCode"] == "REQUEST_TOO_LARGE"
    listing_error = _error(client.post("/transactions/index", content=b"x" * (LIMIT + 1)), 413)
    assert "errorCode" not in listing_error


def test_a_chunked_body_is_refused_once_it_passes_the_limit(service) -> None:
    chunk = b"x" * 16384
    sent = 0
    with _connect(service) as sock:
        sock.sendall(
            b"POST /quote HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        try:
            while sent < 50 * 1024 * 1024 and not _answered(sock):
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
                time.sleep(0.001)
        except (BrokenPipeError, ConnectionResetError):
            pass
        status, body = _read_response(sock)
    assert status == 413 and body["errorCode"] == "REQUEST_TOO_LARGE"
    # Refused near the limit, not after reading the whole 50 MB.
    assert sent < 4 * LIMIT


def test_the_body_limit_is_a_setting(start_service: StartService) -> None:
    service = start_service(settings={"max_request_body_bytes": 4096})
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        assert _error(http.post("/quote/v2", content=b"{" * 4097), 413)["errorCode"]
        # Within the limit the body reaches the route (and fails its validation instead).
        assert http.post("/quote/v2", content=b"{" * 4096).status_code == 400


@pytest.mark.parametrize(
    ("headers", "what"),
    [
        ({f"x-extra-{n}": "1" for n in range(150)}, "Too many request headers"),
        ({"x-big": "a" * (9 * 1024)}, "per header"),
        ({"x-huge": "a" * (1024 * 1024)}, "per header"),
        ({f"x-part-{n}": "a" * (7 * 1024) for n in range(3)}, "in all"),
    ],
)
def test_too_many_or_too_large_headers_are_431(client, headers, what) -> None:
    body = _error(client.get("/chains", headers=headers), 431)
    assert what in str(body["message"])
    quote_body = _error(client.post("/quote/v2", json={}, headers=headers), 431)
    assert quote_body["errorCode"] == "REQUEST_HEADERS_TOO_LARGE"


def test_headers_within_the_limits_are_served(client) -> None:
    headers = {f"x-extra-{n}": "a" * 100 for n in range(80)}
    assert client.get("/chains", headers=headers).status_code == 200


@pytest.mark.parametrize(
    "request_head",
    [
        b"GET /chains HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n",
        b"GET /requests/v3?" + b"chainId=%2C&" * 8000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    ],
)
def test_an_unparsable_request_is_a_400_in_the_error_shape(service, request_head) -> None:
    with _connect(service) as sock:
        sock.sendall(request_head)
        status, body = _read_response(sock)
    assert status == 400
    assert body == {"message": "Invalid HTTP request received.", "statusCode": 400}
