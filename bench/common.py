"""Shared by the benchmarks: a devnet + service in a subprocess, a throwaway PostgreSQL
database, and percentile reporting."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import signal
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from crossfill.settings import Settings
from tests.support.database import throwaway_postgres
from tests.support.service import ServiceProcess


@dataclass(frozen=True)
class RunningService:
    base_url: str
    home: Path
    pid: int
    # The service's other processes, where it runs as several (its workers apart from its API).
    other_pids: tuple[int, ...] = ()


@contextlib.contextmanager
def devnet_service(*extra_args: str, database_url: str | None = None) -> Iterator[RunningService]:
    """`crossfill devnet` on a free port with its own home (and SQLite database, unless
    `database_url` names another); ready once its chains are; stopped with SIGINT at the end."""
    with tempfile.TemporaryDirectory(prefix="crossfill-bench-") as home:
        settings = Settings(
            home=Path(home),
            log_level="WARNING",
            # One load generator on one address: the per-address limit would measure itself.
            rate_limit_anonymous_per_minute=0,
            database_url=database_url,
        )
        devnet = ServiceProcess(
            settings,
            command=("devnet", *extra_args),
            ready_path="/readyz",
            ready_timeout=120,
            stop_signal=signal.SIGINT,
        )
        devnet.start()
        try:
            yield RunningService(devnet.base_url, Path(home), devnet.pid)
        finally:
            devnet.stop(timeout=30)


def load_average() -> str:
    """The machine's load average over the last minute, as the benches print it beside their
    figures (the cores are shared: a figure is read with the load it was measured under)."""
    return f"load average {os.getloadavg()[0]:.1f}"


def report(label: str, seconds: list[float]) -> str:
    cuts = statistics.quantiles(seconds, n=100)
    return f"{label}: p50={cuts[49] * 1000:.2f} ms  p99={cuts[98] * 1000:.2f} ms  n={len(seconds)}"


@dataclass(frozen=True)
class Call:
    """One HTTP request of a load run; `body` is sent as JSON."""

    method: str
    path: str
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()


async def call(session: aiohttp.ClientSession, request: Call) -> None:
    headers = dict(request.headers)
    if request.body is not None:
        headers["Content-Type"] = "application/json"
    async with session.request(
        request.method, request.path, data=request.body, headers=headers
    ) as reply:
        body = await reply.read()
        if reply.status >= 400:
            raise aiohttp.ClientResponseError(
                reply.request_info, (), status=reply.status, message=body.decode(errors="replace")
            )


def as_json(document: object) -> bytes:
    return json.dumps(document).encode()


async def load(
    base_url: str,
    calls: Callable[[int], Call],
    *,
    requests: int,
    concurrency: int,
    rate: float | None = None,
) -> tuple[list[float], float]:
    """`requests` calls, latencies and wall time. Closed loop by default: `concurrency` clients
    each send their next call when the last is answered (measures capacity). With `rate`, open
    loop: call i is due at i/rate seconds and its latency counts from then, so a service that
    falls behind shows it in the percentiles (measures latency at a given offered load).

    The generator runs on aiohttp: it shares the machine's cores with the service, and httpx's
    async client costs about four times the CPU per request. Its own garbage collector is off
    while it measures: a full collection stalls every request due meanwhile (tens of ms) and
    would be counted against the service."""
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=60)
    async with (
        aiohttp.ClientSession(base_url, connector=connector, timeout=timeout) as session,
        _collector_paused(),
    ):
        started = time.perf_counter()
        if rate is None:
            remaining = iter(range(requests))

            async def client_loop() -> None:
                for index in remaining:
                    sent = time.perf_counter()
                    await call(session, calls(index))
                    latencies.append(time.perf_counter() - sent)

            await asyncio.gather(*(client_loop() for _ in range(concurrency)))
        else:
            failures: list[BaseException] = []

            async def one(index: int, due: float) -> None:
                try:
                    await call(session, calls(index))
                except aiohttp.ClientError as exc:
                    failures.append(exc)
                    return
                latencies.append(time.perf_counter() - due)

            in_flight: set[asyncio.Task[None]] = set()
            for index in range(requests):
                due = started + index / rate
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                task = asyncio.create_task(one(index, due))
                in_flight.add(task)
                task.add_done_callback(in_flight.discard)
            await asyncio.gather(*in_flight)
            if failures:
                raise SystemExit(f"{len(failures)} of {requests} calls failed: {failures[0]}")
        return latencies, time.perf_counter() - started


@contextlib.asynccontextmanager
async def _collector_paused() -> AsyncIterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _stat(path: Path) -> tuple[str, list[str]]:
    """A /proc stat file's command name and the fields after it."""
    stat = path.read_text()
    return stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()


def _cpu(fields: list[str], ticks: int) -> float:
    return (int(fields[11]) + int(fields[12])) / ticks


ROLES = ("service", "main_thread", "chains", "postgres")


@dataclass(frozen=True)
class CpuReading:
    """CPU seconds used so far, by role and process (Linux /proc)."""

    by_process: dict[tuple[str, int], float]

    def since(self, before: CpuReading) -> dict[str, float]:
        """The CPU seconds each role used from `before` to this reading: each process's own
        difference (one started meanwhile: all of it; one that exited meanwhile is not
        counted, never a negative figure)."""
        used = dict.fromkeys(ROLES, 0.0)
        for (role, pid), seconds in self.by_process.items():
            used[role] += seconds - before.by_process.get((role, pid), 0.0)
        return used


def cpu_seconds(service: RunningService, database_url: str | None) -> CpuReading:
    """CPU time used so far by the service's own processes, by the anvil chains (the service's
    or the bench's own), and by the PostgreSQL backends serving its database. `main_thread` is
    the part of `service` spent on its processes' main threads, where their event loops run: a
    process serves no faster than its main thread allows."""
    ticks = os.sysconf("SC_CLK_TCK")
    processes = _processes(ticks)
    in_tree = set().union(*(_tree(pid, processes) for pid in (service.pid, *service.other_pids)))
    started_here = _tree(os.getpid(), processes)
    database = None if database_url is None else database_url.rsplit("/", 1)[1]
    used: dict[tuple[str, int], float] = {}
    for pid, (name, _, command, cpu) in processes.items():
        if name == "anvil" and (pid in in_tree or pid in started_here):
            used["chains", pid] = cpu
        elif pid in in_tree:
            used["service", pid] = cpu
            used["main_thread", pid] = _main_thread_cpu(pid, ticks)
        elif name == "postgres" and database is not None and f" {database} " in command:
            used["postgres", pid] = cpu
    return CpuReading(used)


def _processes(ticks: int) -> dict[int, tuple[str, int, str, float]]:
    """Every process: pid -> (name, parent, command line, cpu seconds)."""
    processes = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name, fields = _stat(entry / "stat")
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        processes[int(entry.name)] = (name, int(fields[1]), command, _cpu(fields, ticks))
    return processes


def _tree(root: int, processes: dict[int, tuple[str, int, str, float]]) -> set[int]:
    """`root` and its descendants."""
    in_tree = {root}
    changed = True
    while changed:
        changed = False
        for pid, (_, parent, _, _) in processes.items():
            if parent in in_tree and pid not in in_tree:
                in_tree.add(pid)
                changed = True
    return in_tree


def _main_thread_cpu(pid: int, ticks: int) -> float:
    try:
        return _cpu(_stat(Path(f"/proc/{pid}/task/{pid}/stat"))[1], ticks)
    except OSError:
        return 0.0  # exited meanwhile


@contextlib.contextmanager
def database_for(kind: str) -> Iterator[str | None]:
    """The service's database for a bench run: None (its embedded SQLite) or the URL of a
    throwaway PostgreSQL database."""
    if kind == "sqlite":
        yield None
        return
    with asyncio.Runner() as runner:
        postgres = throwaway_postgres("crossfill_bench")
        url = runner.run(postgres.__aenter__())
        try:
            yield url
        finally:
            runner.run(postgres.__aexit__(None, None, None))
