"""Shared by the benchmarks: a devnet + service in a subprocess, a throwaway PostgreSQL
database, and percentile reporting."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx

from crossfill.devnet.anvil import free_port


@dataclass(frozen=True)
class RunningService:
    base_url: str
    home: Path


def _wait_ready(base_url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("devnet did not become ready")


@contextlib.contextmanager
def devnet_service(*extra_args: str) -> Iterator[RunningService]:
    """`crossfill devnet` on a free port with its own home; stopped with SIGINT at the end."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="crossfill-bench-") as home:
        env = {
            **os.environ,
            "CROSSFILL_HOME": home,
            "CROSSFILL_LOG_LEVEL": "WARNING",
            # One load generator on one address: the per-address limit would measure itself.
            "CROSSFILL_RATE_LIMIT_ANONYMOUS_PER_MINUTE": "0",
        }
        devnet = subprocess.Popen(
            [sys.executable, "-m", "crossfill", "devnet", "--port", str(port), *extra_args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_ready(base_url)
            yield RunningService(base_url, Path(home))
        finally:
            devnet.send_signal(signal.SIGINT)
            devnet.wait(30)


def report(label: str, seconds: list[float]) -> str:
    cuts = statistics.quantiles(seconds, n=100)
    return f"{label}: p50={cuts[49] * 1000:.2f} ms  p99={cuts[98] * 1000:.2f} ms  n={len(seconds)}"


async def load(
    client: httpx.AsyncClient,
    send: Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]],
    *,
    requests: int,
    concurrency: int,
) -> tuple[list[float], float]:
    """`requests` calls of `send` from `concurrency` concurrent loops: latencies and wall time."""
    latencies: list[float] = []
    remaining = iter(range(requests))

    async def client_loop() -> None:
        for index in remaining:
            started = time.perf_counter()
            (await send(client, index)).raise_for_status()
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client_loop() for _ in range(concurrency)))
    return latencies, time.perf_counter() - started


POSTGRES_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/test"


@contextlib.asynccontextmanager
async def throwaway_postgres(*, keep: bool = False) -> AsyncIterator[str]:
    """A fresh PostgreSQL database for one bench run; its SQLAlchemy URL. Dropped after."""
    name = f"crossfill_bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(POSTGRES_ADMIN_DSN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        if not keep:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
