"""A TCP relay in front of a server's port (a chain's websocket, the database): it relays bytes
both ways (whatever protocol runs over them) and can drop every connection at once and refuse
new ones, as a server restart would, or stall them all (nothing relayed, new connections left
waiting, nothing closed), as a network cut that loses packets silently would. It listens on
loopback unless given another of this host's addresses (a bridge's, for network namespaces
that reach loopback-only servers through it: `tests.support.hosts`)."""

from __future__ import annotations

import asyncio
import contextlib

from crossfill.devnet.child_process import free_port
from tests.support.loop_thread import LoopThreadServer, end_other_tasks


class TcpRelay(LoopThreadServer):
    def __init__(self, upstream_port: int, *, host: str = "127.0.0.1") -> None:
        super().__init__()
        self.upstream_port = upstream_port
        self.host = host
        self.port = free_port(host)
        self.accepted = 0  # connections relayed so far
        self._refusing = False
        self._flowing: asyncio.Event | None = None  # made on the relay's loop
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    async def _listen(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._relay, self.host, self.port)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Cancelled only by `stop()`: ended quietly (asyncio logs a relaying task's
        # cancellation as an error).
        with contextlib.suppress(asyncio.CancelledError):
            await self._relay_connection(reader, writer)

    async def _relay_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if self._refusing:
            writer.close()
            return
        self.accepted += 1
        self._writers.add(writer)
        assert self._flowing is not None
        await self._flowing.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers.add(up_writer)
        try:
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
        finally:
            writer.transport.abort()
            up_writer.transport.abort()

    def drop(self) -> None:
        """Cut every relayed connection and refuse new ones until `restore()`."""

        def cut() -> None:
            self._refusing = True
            for writer in self._writers:
                writer.transport.abort()
            self._writers.clear()

        self._loop.call_soon_threadsafe(cut)

    def stall(self) -> None:
        """Relay nothing and leave new connections waiting, closing nothing, until
        `restore()`."""
        assert self._flowing is not None
        self._loop.call_soon_threadsafe(self._flowing.clear)

    def restore(self) -> None:
        def restored() -> None:
            assert self._flowing is not None
            self._refusing = False
            self._flowing.set()

        self._loop.call_soon_threadsafe(restored)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._flowing is not None
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await reader.read(65536):
                await self._flowing.wait()
                writer.write(chunk)
                await writer.drain()
        writer.transport.abort()

    async def _shut_down(self) -> None:
        """Every connection closed and every relaying task ended: nothing left open."""
        self._refusing = True
        self._server.close()
        for writer in self._writers:
            writer.transport.abort()
        await end_other_tasks()
