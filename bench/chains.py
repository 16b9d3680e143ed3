"""GET /chains latency and throughput against a local devnet.

Run: `.venv/bin/python bench/chains.py [--requests 2000] [--concurrency 8]`.
"""

from __future__ import annotations

import argparse

import uvloop

from bench.common import Call, devnet_service, load, report

CHAINS = Call("GET", "/chains")


async def _load(base_url: str, requests: int, concurrency: int) -> tuple[list[float], float]:
    await load(base_url, lambda _i: CHAINS, requests=10, concurrency=1)  # warm-up
    return await load(base_url, lambda _i: CHAINS, requests=requests, concurrency=concurrency)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with devnet_service() as service:
        latencies, elapsed = uvloop.run(_load(service.base_url, args.requests, args.concurrency))
    print(f"GET /chains  concurrency={args.concurrency}")
    print(report("latency", latencies))
    print(f"throughput={len(latencies) / elapsed:.0f} req/s")


if __name__ == "__main__":
    main()
