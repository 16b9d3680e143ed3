"""A TCP load balancer in front of API processes, as operators put one: it probes each
backend's `/readyz` every `PROBE_SECONDS`, sends each new client connection to the next ready
backend in turn, and relays the connection's bytes both ways until either side closes. A
backend that refuses the connection is skipped for the next ready one (nothing of the
client's request has gone anywhere yet); once bytes flow, nothing is retried, so a backend
that drops a connection mid-request fails that request, as it would behind a real balancer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from dataclasses import dataclass

from crossfill.devnet.child_process import free_port
from tests.support.loop_thread import LoopThreadServer, end_other_tasks

PROBE_SECONDS = 0.2


@dataclass(frozen=True)
class Backend:
    host: str
    port: int


class TcpBalancer(LoopThreadServer):
    def __init__(self, backends: list[Backend]) -> None:
        super().__init__()
        self.backends = backends
        self.port = free_port()
        self.ready: set[Backend] = set()
        self.connections: dict[Backend, int] = dict.fromkeys(backends, 0)  # sent to each
        self.turned_away = 0  # client connections closed: no backend ready or reachable
        self._turns = itertools.cycle(backends)
        self._probing: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        self._probing = asyncio.create_task(self._probe_forever())

    async def _probe_forever(self) -> None:
        while True:
            found = await asyncio.gather(*(_ready(backend) for backend in self.backends))
            self.ready = {backend for backend, ok in zip(self.backends, found, strict=True) if ok}
            await asyncio.sleep(PROBE_SECONDS)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            upstream = await self._connect()
            if upstream is None:
                self.turned_away += 1
                writer.transport.abort()
                return
            up_reader, up_writer = upstream
            try:
                await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            finally:
                writer.transport.abort()
                up_writer.transport.abort()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """A connection to the next ready backend that takes one; None if none does."""
        for _ in range(len(self.backends)):
            backend = next(self._turns)
            if backend not in self.ready:
                continue
            try:
                connection = await asyncio.open_connection(backend.host, backend.port)
            except OSError:
                continue
            self.connections[backend] += 1
            return connection
        return None

    async def _shut_down(self) -> None:
        self._server.close()
        await end_other_tasks()


async def _ready(backend: Backend) -> bool:
    """Whether the backend's `/readyz` answers 200 within a second."""
    try:
        async with asyncio.timeout(1):
            reader, writer = await asyncio.open_connection(backend.host, backend.port)
            try:
                writer.write(b"GET /readyz HTTP/1.1\r\nHost: balancer\r\nConnection: close\r\n\r\n")
                status_line = await reader.readline()
            finally:
                writer.transport.abort()
    except (OSError, TimeoutError):
        return False
    return status_line.split(b" ")[1:2] == [b"200"]


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Bytes from `reader` to `writer`; at the end, `writer` closed once what it holds is
    sent (a backend's last answer reaches its client whole)."""
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
        writer.close()
        await writer.wait_closed()
    except (ConnectionError, OSError):
        writer.transport.abort()
