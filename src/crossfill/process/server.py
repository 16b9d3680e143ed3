"""Run the API (and the chain followers) under uvicorn until asked to stop."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import FrameType

import structlog
import uvicorn
from fastapi import FastAPI

from crossfill.api.draining import Drain
from crossfill.api.limits import uvicorn_limits
from crossfill.api.ops_app import create_ops_app
from crossfill.app.inventory import InventoryView
from crossfill.errors import ConfigError
from crossfill.kinds.port import ChainKind
from crossfill.kinds.registry import KINDS
from crossfill.loops import stop_tasks
from crossfill.metrics import clear_multiprocess_dir
from crossfill.process.cpu_priority import lower_cpu_priority
from crossfill.process.late_stop import reported_if_late
from crossfill.process.open_files import raise_open_files_limit
from crossfill.process.replicas import (
    ApiReplicas,
    listening_socket,
    report_ready,
    stop_when_orphaned,
)
from crossfill.process.service import ProcessWorkers, build_service
from crossfill.runtime import Runtime
from crossfill.settings import Settings
from crossfill.store.migrate import upgrade_async

log = structlog.get_logger(__name__)

# How long a stop lets the requests under way finish (each takes milliseconds) before it
# cancels them; the workers' stop comes after.
SHUTDOWN_GRACE_SECONDS = 5


async def serve(settings: Settings, *, kinds: Sequence[ChainKind] = KINDS) -> None:
    """The main process: migrate the database, start the API replicas if there are to be
    several API processes, then serve the API and run the workers until SIGINT/SIGTERM.
    `kinds`: the kinds of chain served (the devnet's own, with its keys, in devnet mode)."""
    raise_open_files_limit()
    await upgrade_async(settings.database)
    if settings.prometheus_multiproc_dir is not None:
        clear_multiprocess_dir(settings.prometheus_multiproc_dir)
    sock = _socket(settings)
    replicas = supervisor = None
    if settings.api_processes > 1:
        if settings.redis_url is None:
            log.warning("rate_limits_per_process", api_processes=settings.api_processes)
        if settings.prometheus_multiproc_dir is None:
            log.warning("metrics_per_process", api_processes=settings.api_processes)
        replicas = ApiReplicas(sock.getsockname()[1], settings.api_processes)
        await replicas.start()
        supervisor = asyncio.create_task(replicas.supervise(), name="api-replicas")
    try:
        config = _config(settings, sock, run_workers=True, kinds=kinds)
        await _Server(config, on_drain=None if replicas is None else replicas.drain).serve(
            sockets=[sock]
        )
    finally:
        if replicas is not None and supervisor is not None:
            await stop_tasks([supervisor])
            await replicas.stop()


async def run_workers_only(settings: Settings, *, kinds: Sequence[ChainKind] = KINDS) -> None:
    """Workers without the API (`crossfill run --workers-only`): migrate, follow the chains,
    run every worker until SIGINT/SIGTERM. API processes (`crossfill api`) on the same
    PostgreSQL database forward clients' deposit hints here; a second workers process waits
    on the signer lease instead of signing. `kinds`: as `serve`'s."""
    raise_open_files_limit()
    lower_cpu_priority(settings.workers_nice)
    # Bound first: a port taken stops the process before it touches the database or chains.
    ops_socket = (
        None
        if settings.ops_port is None
        else listening_socket(settings.host, settings.ops_port, shared=False)
    )
    await upgrade_async(settings.database)
    runtime = Runtime.build(settings, kinds=kinds)
    workers = ProcessWorkers(runtime)
    listener = None
    views: list[asyncio.Task[None]] = []
    try:
        runtime.start_wal_checkpoints()
        await runtime.start_followers()
        views.append(asyncio.create_task(InventoryView.of(runtime).run(), name="inventory-view"))
        await workers.start()
        if ops_socket is not None:
            listener = await OpsListener.start(runtime, ops_socket)
        log.info("workers running", chains=sorted(runtime.kind_chains), ops_port=settings.ops_port)
        await asyncio.Event().wait()
    finally:
        with reported_if_late():
            if listener is not None:
                await listener.stop()
            elif ops_socket is not None:
                ops_socket.close()
            await workers.stop()
            await stop_tasks(views)
            await runtime.close()


async def serve_replica(settings: Settings, *, ready_fd: int | None) -> None:
    """An API-only process: no workers, no migrations (the main process or `crossfill db
    upgrade` owns the schema). Started by the main process, it reports on `ready_fd` once it
    serves and stops when the main process is gone."""
    raise_open_files_limit()
    sock = _socket(settings)
    server = _Server(_config(settings, sock, run_workers=False, kinds=KINDS), ready_fd=ready_fd)
    orphan_watch = asyncio.create_task(stop_when_orphaned()) if ready_fd is not None else None
    try:
        await server.serve(sockets=[sock])
    finally:
        if orphan_watch is not None:
            await stop_tasks([orphan_watch])


def _socket(settings: Settings) -> socket.socket:
    return listening_socket(settings.host, settings.port, shared=settings.api_processes > 1)


def _config(
    settings: Settings, sock: socket.socket, *, run_workers: bool, kinds: Sequence[ChainKind]
) -> uvicorn.Config:
    runtime = Runtime.build(settings, kinds=kinds)
    config = uvicorn_config(
        build_service(runtime, run_workers=run_workers), settings, port=sock.getsockname()[1]
    )
    _tune_garbage_collector()
    return config


def uvicorn_config(app: FastAPI, settings: Settings, *, port: int) -> uvicorn.Config:
    """How uvicorn serves the app (here, and in the tests' in-process service):

    - its records go to the root logger (`log_config=None`), through the process's secret
      redaction and format, not through uvicorn's own handlers;
    - no access log: request lines carry query strings (`GET /ws?apiKey=...`);
    - request and frame size limits, unparsable requests answered in the error shape
      (`api.limits.uvicorn_limits`);
    - a stop waits at most `SHUTDOWN_GRACE_SECONDS` for requests under way, then cancels
      them: a client that never finishes (its body, or reading its answer) cannot keep the
      process from exiting;
    - no proxy-header rewriting: uvicorn would take `X-Forwarded-For` from any loopback peer
      as the client, so anyone on the host could pick their rate-limit bucket. The client
      address is worked out by `api/client_address.py`, from `CROSSFILL_TRUSTED_PROXIES`.
    """
    return uvicorn.Config(
        app,
        host=settings.host,
        port=port,
        log_level=settings.log_level.lower(),
        log_config=None,
        access_log=False,
        proxy_headers=False,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        **uvicorn_limits(settings),
    )


class _Server(uvicorn.Server):
    """uvicorn serving the API: reports ready on `ready_fd` (a replica started by the main
    process), and drains before it stops (`api.draining`): the first SIGTERM or SIGINT starts
    a drain of `CROSSFILL_DRAIN_SECONDS`, after which uvicorn's own graceful stop runs; a
    second signal ends the drain at once. `on_drain`: called as the drain begins (the main
    process's replicas asked to drain beside it)."""

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        ready_fd: int | None = None,
        on_drain: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(config)
        self._ready_fd = ready_fd
        self._on_drain = on_drain
        app = config.app
        assert isinstance(app, FastAPI)
        self._drain: Drain = app.state.drain
        self._drain_seconds = app.state.runtime.settings.drain_seconds
        # The signal that began the drain, and when the drain ends (monotonic seconds).
        self._draining: tuple[int, float] | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """A signal handler: only flags, the main loop's next tick acts on them."""
        if self._draining is None and self._drain_seconds > 0 and not self.should_exit:
            self._draining = (sig, time.monotonic() + self._drain_seconds)
            self._drain.start()
            if self._on_drain is not None:
                self._on_drain()
            return
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self._draining is not None and not self.should_exit:
            sig, until = self._draining
            if counter % 10 == 0:
                log.info("draining", seconds_left=round(max(until - time.monotonic(), 0), 1))
            if time.monotonic() >= until:
                super().handle_exit(sig, None)  # uvicorn's stop, the signal raised after it
        return await super().on_tick(counter)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self._ready_fd is not None and self.started:
            report_ready(self._ready_fd)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Connections closed, then the app's lifespan ended (its workers, chains' clients and
        database closed): what is still awaited is logged should that take too long."""
        with reported_if_late():
            await super().shutdown(sockets)


class _QuietServer(uvicorn.Server):
    """uvicorn serving beside the process's own work: the process, not uvicorn, handles its
    signals (uvicorn's handlers would replace the runner's, and re-raise on exit)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class OpsListener:
    """A workers-only process's `/metrics`, `/healthz` and `/readyz` (`api.ops_app`)."""

    server: uvicorn.Server
    serving: asyncio.Task[None]

    @classmethod
    async def start(cls, runtime: Runtime, sock: socket.socket) -> OpsListener:
        """Serving on `sock` (bound: `listening_socket`) once this returns."""
        settings = runtime.settings
        port = sock.getsockname()[1]
        config = uvicorn_config(create_ops_app(runtime), settings, port=port)
        server = _QuietServer(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]), name="ops-listener")
        while not server.started:
            if serving.done():
                serving.result()  # its failure, raised here
                raise ConfigError(f"the ops listener on port {port} did not start")
            await asyncio.sleep(0.05)
        log.info("ops listener serving", host=settings.host, port=port)
        return cls(server, serving)

    async def stop(self) -> None:
        self.server.should_exit = True
        await self.serving


def _tune_garbage_collector() -> None:
    """What exists after start-up (the deployment, ABIs, the app, compiled SQL) lives until
    exit: frozen, full collections stop re-walking it. A quote allocates thousands of
    short-lived objects; young collections every 20,000 allocations instead of 700 cost
    little memory. Measured: the collector took about 7% of a loaded API process before,
    under 1% after."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
