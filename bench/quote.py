"""POST /quote/v2 under concurrent load: latency p50/p99 and quotes per second.

`--kind bridge` quotes native and USDC bridges for the devnet's test users, alternating;
`--kind swap` quotes cross-chain swaps (ETH -> USDC, destination swap on the Uniswap V2 pool)
and same-chain swaps (USDC -> ETH), alternating. The load generator shares the machine's cores
with the service and the chains.
Run: `.venv/bin/python -m bench.quote [--kind swap] [--requests 3000] [--warmup 1000]
[--concurrency 16] [--rate 300] [--database postgres] [--api-processes 2]`.
"""

from __future__ import annotations

import argparse
import asyncio
import tomllib
from dataclasses import dataclass
from typing import Any

import httpx
import uvloop

from bench.common import (
    Call,
    RunningService,
    as_json,
    cpu_seconds,
    database_for,
    devnet_service,
    load,
    report,
)
from crossfill.devnet import accounts

NATIVE = "0x0000000000000000000000000000000000000000"


def _bodies(deployment: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    origin, destination = deployment["chains"][0], deployment["chains"][1]

    def usdc(chain: dict[str, Any]) -> str:
        return str(next(c["address"] for c in chain["erc20_currencies"] if c["symbol"] == "USDC"))

    bodies = []
    for user in accounts.users():
        common = {
            "user": user.address,
            "originChainId": origin["id"],
            "destinationChainId": destination["id"],
            "tradeType": "EXACT_INPUT",
        }
        if kind == "swap":
            bodies.append(
                {
                    **common,
                    "originCurrency": NATIVE,
                    "destinationCurrency": usdc(destination),
                    "amount": str(10**17),
                }
            )
            bodies.append(
                {
                    **common,
                    "destinationChainId": origin["id"],
                    "originCurrency": usdc(origin),
                    "destinationCurrency": NATIVE,
                    "amount": "25000000",
                }
            )
            continue
        bodies.append(
            {
                **common,
                "originCurrency": NATIVE,
                "destinationCurrency": NATIVE,
                "amount": str(10**17),
            }
        )
        bodies.append(
            {
                **common,
                "originCurrency": usdc(origin),
                "destinationCurrency": usdc(destination),
                "amount": "25000000",
            }
        )
    return bodies


@dataclass(frozen=True)
class Measured:
    latencies: list[float]
    elapsed: float
    cpu: dict[str, float]  # seconds used while measuring, by role (see bench.common.cpu_seconds)


async def _load(
    service: RunningService,
    database_url: str | None,
    bodies: list[dict[str, Any]],
    args: argparse.Namespace,
) -> Measured:
    calls = [Call("POST", "/quote/v2", as_json(body)) for body in bodies]
    async with httpx.AsyncClient(base_url=service.base_url, timeout=30) as client:
        for body in bodies:  # until the followers have fees, inventory and pool reserves
            for _ in range(50):
                if (await client.post("/quote/v2", json=body)).status_code == 200:
                    break
                await asyncio.sleep(0.2)

    async def run(requests: int) -> tuple[list[float], float]:
        return await load(
            service.base_url,
            lambda i: calls[i % len(calls)],
            requests=requests,
            concurrency=args.concurrency,
            rate=args.rate,
        )

    # Unmeasured: connections, first-use caches, and the chains' start-up work settle first.
    await run(args.warmup)
    before = cpu_seconds(service, database_url)
    latencies, elapsed = await run(args.requests)
    after = cpu_seconds(service, database_url)
    return Measured(latencies, elapsed, {role: after[role] - before[role] for role in after})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=1000, help="unmeasured quotes first")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--kind", choices=("bridge", "swap"), default="bridge")
    parser.add_argument(
        "--rate",
        type=float,
        help="open loop: offer this many quotes per second (concurrency caps connections)",
    )
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument(
        "--api-processes",
        type=int,
        default=1,
        help="API processes sharing the port (more than 1 needs --database postgres)",
    )
    args = parser.parse_args()
    service_args = ("--api-processes", str(args.api_processes))
    with (
        database_for(args.database) as url,
        devnet_service(*service_args, database_url=url) as service,
    ):
        deployment = tomllib.loads((service.home / "deployment.toml").read_text())
        measured = uvloop.run(_load(service, url, _bodies(deployment, args.kind), args))
    offered = "closed loop" if args.rate is None else f"offered {args.rate:.0f}/s"
    print(
        f"POST /quote/v2  kind={args.kind} database={args.database} "
        f"api_processes={args.api_processes} concurrency={args.concurrency} {offered}"
    )
    quotes = len(measured.latencies)
    print(report("latency", measured.latencies))
    print(f"throughput={quotes / measured.elapsed:.0f} quotes/s")
    print(
        "cpu per quote: "
        + "  ".join(
            f"{role}={seconds / quotes * 1000:.2f} ms" for role, seconds in measured.cpu.items()
        )
    )


if __name__ == "__main__":
    main()
