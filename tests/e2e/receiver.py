"""A real HTTP webhook receiver for tests, verifying every delivery with its own HMAC code."""

from __future__ import annotations

import hashlib
import hmac
import json
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from crossfill.devnet.child_process import free_port


@dataclass
class Delivery:
    at: float
    event_id: str
    headers: dict[str, str]
    body: dict[str, Any]
    answered: int
    authentic: bool
    # Over TLS: the name the sender's handshake asked for (SNI) on the delivery's connection.
    sni: str | None = None
    # The sender's end of the connection the delivery came on (address, port).
    peer: tuple[str, int] | None = None


@dataclass
class Receiver:
    """Answers 500 to the first `fail_first` attempts of each event (all, if None: forever)."""

    key: str
    fail_first: int = 0
    always_fail: bool = False
    delay_seconds: float = 0.0  # a slow receiver: each answer waits this long
    # A hostile receiver: its answers' bodies never end (sent until the sender hangs up).
    endless_body: bool = False
    # Served over TLS with this context (its certificate's name is the test's to choose).
    tls: ssl.SSLContext | None = None
    # HTTP/1.1 connections kept open between deliveries (by default each answer closes it).
    keep_alive: bool = False
    body_bytes_sent: int = 0
    deliveries: list[Delivery] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                raw = self.rfile.read(length)
                if len(raw) < length:
                    return  # the sender went away mid-body (killed): nothing was delivered
                receiver._handle(self, raw)

            def log_message(self, *_args: object) -> None:
                pass

        if self.keep_alive:
            Handler.protocol_version = "HTTP/1.1"

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        if self.tls is not None:
            self.url = f"https://127.0.0.1:{self.port}/hooks"
            self.tls.sni_callback = _remember_sni
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _authentic(self, headers: dict[str, str], raw: bytes) -> bool:
        stamp = headers.get("X-Signature-Timestamp", "")
        expected = hmac.new(self.key.encode(), stamp.encode() + b"." + raw, hashlib.sha256)
        given = headers.get("X-Signature-SHA256", "")
        fresh = stamp.isdigit() and abs(time.time() - int(stamp)) < 300
        return fresh and hmac.compare_digest(expected.hexdigest(), given)

    def _handle(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        time.sleep(self.delay_seconds)
        headers = dict(handler.headers.items())
        event_id = headers.get("X-Webhook-Id", "")
        authentic = self._authentic(headers, raw)
        with self._lock:
            tries = sum(1 for d in self.deliveries if d.event_id == event_id)
            failing = self.always_fail or tries < self.fail_first
            answered = 401 if not authentic else 500 if failing else 200
            self.deliveries.append(
                Delivery(
                    time.monotonic(),
                    event_id,
                    headers,
                    json.loads(raw),
                    answered,
                    authentic,
                    sni=getattr(handler.connection, "sni", None),
                    peer=handler.client_address[:2],
                )
            )
        handler.send_response(answered)
        if not self.endless_body:
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.end_headers()
        chunk = b"x" * 65536
        try:
            while True:
                handler.wfile.write(chunk)
                with self._lock:
                    self.body_bytes_sent += len(chunk)
        except OSError:
            return  # the sender hung up

    def accepted(self, request_id: str | None = None) -> list[Delivery]:
        with self._lock:
            return [
                d
                for d in self.deliveries
                if d.answered == 200 and request_id in (None, d.body["data"]["requestId"])
            ]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _remember_sni(connection: ssl.SSLObject, name: str, _context: ssl.SSLContext) -> None:
    """The TLS server's SNI callback: the name the client asked for, kept on its socket (an
    SSLSocket here, the server's socket being wrapped)."""
    connection.sni = name  # type: ignore[attr-defined]
