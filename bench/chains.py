"""GET /chains latency and throughput against a local devnet.

Starts `crossfill devnet` on a free port (its own CROSSFILL_HOME), waits until ready, sends a
bounded number of requests from a few concurrent clients, prints p50/p99 and requests/s, and
stops the devnet. Run: `.venv/bin/python bench/chains.py [--requests 2000] [--concurrency 8]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import httpx

from crossfill.devnet.anvil import free_port


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


async def _load(base_url: str, requests: int, concurrency: int) -> tuple[list[float], float]:
    latencies: list[float] = []
    remaining = iter(range(requests))

    async def client_loop(client: httpx.AsyncClient) -> None:
        for _ in remaining:
            started = time.perf_counter()
            response = await client.get("/chains")
            response.raise_for_status()
            latencies.append(time.perf_counter() - started)

    async with httpx.AsyncClient(base_url=base_url, timeout=10) as client:
        await client.get("/chains")  # warm-up
        started = time.perf_counter()
        await asyncio.gather(*(client_loop(client) for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return latencies, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="crossfill-bench-") as home:
        env = {**os.environ, "CROSSFILL_HOME": home, "CROSSFILL_LOG_LEVEL": "WARNING"}
        devnet = subprocess.Popen(
            [sys.executable, "-m", "crossfill", "devnet", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_ready(base_url)
            latencies, elapsed = asyncio.run(_load(base_url, args.requests, args.concurrency))
        finally:
            devnet.send_signal(signal.SIGINT)
            devnet.wait(30)
    cuts = statistics.quantiles(latencies, n=100)
    print(f"GET /chains  requests={len(latencies)} concurrency={args.concurrency}")
    print(f"p50={cuts[49] * 1000:.2f} ms  p99={cuts[98] * 1000:.2f} ms")
    print(f"throughput={len(latencies) / elapsed:.0f} req/s")


if __name__ == "__main__":
    main()
