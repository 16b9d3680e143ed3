"""Several API processes on one host, sharing its port.

One Python process serves the API on one core. With `CROSSFILL_API_PROCESSES=N` the main
process (`crossfill run` or `crossfill devnet`: API and workers) starts N-1 API-only replicas
(`crossfill api`); every process binds the port with SO_REUSEPORT and the kernel spreads new
connections over them. Replicas keep nothing of their own: quotes, statuses and keys live in
the database, status events reach each process's websockets through the outbox tail, and rate
limits are shared through Redis when `CROSSFILL_REDIS_URL` is set.

The main process waits until every replica serves before it serves itself, so a client that
sees the service ready reaches all of them; it restarts a replica that dies, and stops them all
when it stops. A replica whose main process is gone stops itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from dataclasses import dataclass, field

import structlog

from crossfill.errors import ConfigError

log = structlog.get_logger(__name__)

READY = b"1"
START_TIMEOUT_SECONDS = 120.0
STOP_TIMEOUT_SECONDS = 15.0
RESTART_DELAY_SECONDS = 1.0


def listening_socket(host: str, port: int, *, shared: bool) -> socket.socket:
    """The API's socket, bound (not yet listening). `shared`: other processes may bind the
    same port (SO_REUSEPORT) and receive their share of its connections."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    return sock


@dataclass
class ApiReplicas:
    """The main process's API-only replicas: started, watched, restarted, stopped."""

    port: int
    total_processes: int
    _processes: list[asyncio.subprocess.Process] = field(default_factory=list)
    _stopping: bool = False

    async def start(self) -> None:
        """Start every replica; return once each serves. If one cannot, stop the others and
        raise ConfigError."""
        started = await asyncio.gather(
            *(self._spawn() for _ in range(self.total_processes - 1)), return_exceptions=True
        )
        self._processes = [p for p in started if isinstance(p, asyncio.subprocess.Process)]
        failures = [error for error in started if isinstance(error, BaseException)]
        if failures:
            await self.stop()
            raise failures[0]

    async def supervise(self) -> None:
        """Until stopped: a replica that exits is logged and started again."""
        while True:
            waits = {asyncio.ensure_future(process.wait()): process for process in self._processes}
            done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for waiting in pending:
                waiting.cancel()
            # A moment first: on Ctrl-C the whole process group stops, the main process too.
            await asyncio.sleep(RESTART_DELAY_SECONDS)
            if self._stopping:
                return
            for finished in done:
                process = waits[finished]
                log.error("api_replica_exited", pid=process.pid, returncode=process.returncode)
                try:
                    replacement = await self._spawn()
                except ConfigError as exc:
                    log.error("api_replica_restart_failed", error=str(exc))
                    continue
                self._processes[self._processes.index(process)] = replacement

    def drain(self) -> None:
        """The main process has begun its drain: each replica is asked to stop now (SIGTERM:
        it drains beside the main process, rather than after it), and none is started again.
        Safe in a signal handler: it only signals processes."""
        self._stopping = True
        for process in self._processes:
            if process.returncode is None:
                process.terminate()

    async def stop(self) -> None:
        self._stopping = True
        for process in self._processes:
            if process.returncode is None:
                process.terminate()
        for process in self._processes:
            try:
                async with asyncio.timeout(STOP_TIMEOUT_SECONDS):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()

    async def _spawn(self) -> asyncio.subprocess.Process:
        ready_read, ready_write = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "crossfill",
                "api",
                "--port",
                str(self.port),
                "--ready-fd",
                str(ready_write),
                pass_fds=(ready_write,),
                env={**os.environ, "CROSSFILL_API_PROCESSES": str(self.total_processes)},
            )
        finally:
            os.close(ready_write)
        ready = b""
        try:
            ready = await self._ready(ready_read)
        finally:  # also when cancelled while it starts: it must not outlive this
            if ready != READY:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
            os.close(ready_read)
        if ready != READY:
            raise ConfigError(f"an API replica did not start (exit code {process.returncode})")
        log.info("api_replica_started", pid=process.pid, port=self.port)
        return process

    @staticmethod
    async def _ready(ready_read: int) -> bytes:
        """READY once the replica serves; b"" if it exited first or took too long."""
        try:
            async with asyncio.timeout(START_TIMEOUT_SECONDS):
                return await asyncio.to_thread(os.read, ready_read, 1)
        except TimeoutError:
            return b""


def report_ready(ready_fd: int) -> None:
    """In a replica: tell the main process this one serves."""
    os.write(ready_fd, READY)
    os.close(ready_fd)


async def stop_when_orphaned() -> None:
    """In a replica: once the main process is gone (even killed outright), stop like on
    SIGTERM, so no orphan keeps a share of the port's connections."""
    parent = os.getppid()
    gone = asyncio.Event()
    watch = os.pidfd_open(parent)  # readable once that process has exited
    loop = asyncio.get_running_loop()
    loop.add_reader(watch, gone.set)
    try:
        if os.getppid() == parent:  # else it exited before the watch began
            await gone.wait()
    finally:
        loop.remove_reader(watch)
        os.close(watch)
    log.warning("api_replica_orphaned", parent=parent)
    os.kill(os.getpid(), signal.SIGTERM)
