"""POST /quote/v2 under concurrent load: latency p50/p99 and quotes per second.

`--kind bridge` quotes native and USDC bridges for the devnet's test users, alternating;
`--kind swap` quotes cross-chain swaps (ETH -> USDC, destination swap on the Uniswap V2 pool)
and same-chain swaps (USDC -> ETH), alternating. The load generator shares the machine's cores
with the service and the chains.
Run: `.venv/bin/python -m bench.quote [--kind swap] [--requests 3000] [--warmup 1000]
[--concurrency 16] [--rate 300] [--database postgres] [--api-processes 2]`.

`--wrk` measures with `wrk` instead (closed loop, `--concurrency` connections, `--seconds` per
run) and, in the same run, a bare ASGI app (`bench/bare_app.py`: the same uvicorn, uvloop and
httptools) answering the very bytes the service answered for each body: the serving ceiling
of one Python process on this machine. It prints both, the service's share of the ceiling,
and CPU per quote by role (`main_thread`: the part of the service's on its processes' main
threads, where the event loops run; at about 100% of a core it is what caps a process's
throughput). Absolute figures on a shared VM drift; the ratio and the CPU per quote are what
to compare builds by. With `--api-processes N` the bare app runs as N processes
sharing the port too, and the bench ends by measuring it on 1 and on N processes: how far the
ceiling itself scales here, beside the service's N-process figure against a 1-process run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
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
from bench.wrk import WrkResult, run_wrk
from crossfill.devnet import accounts
from crossfill.devnet.child_process import free_port

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


async def _first_answers(service: RunningService, bodies: list[bytes]) -> list[bytes]:
    """Each body's first successful answer, once the followers have fees, inventory and pool
    reserves."""
    answers = []
    headers = {"Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=service.base_url, timeout=30) as client:
        for body in bodies:
            for _ in range(50):
                reply = await client.post("/quote/v2", content=body, headers=headers)
                if reply.status_code == 200:
                    answers.append(reply.content)
                    break
                await asyncio.sleep(0.2)
            else:
                raise SystemExit(f"no quote for {body!r}: {reply.text}")
    return answers


async def _load(
    service: RunningService,
    database_url: str | None,
    bodies: list[dict[str, Any]],
    args: argparse.Namespace,
) -> Measured:
    calls = [Call("POST", "/quote/v2", as_json(body)) for body in bodies]
    await _first_answers(service, [as_json(body) for body in bodies])

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
    return Measured(latencies, elapsed, after.since(before))


@contextlib.contextmanager
def _bare_app(pairs: list[tuple[bytes, bytes]], processes: int = 1) -> Iterator[RunningService]:
    """`bench/bare_app.py` in a subprocess (`processes` of them sharing the port), answering
    these (request, answer) pairs."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="crossfill-bare-") as home:
        answers = Path(home) / "answers.json"
        answers.write_text(json.dumps([[body.decode(), answer.decode()] for body, answer in pairs]))
        bare = subprocess.Popen(
            [
                *(sys.executable, "-m", "bench.bare_app", "--port", str(port)),
                *("--answers", str(answers), "--processes", str(processes)),
            ],
            env=os.environ,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit("the bare app did not start")
                time.sleep(0.1)
            yield RunningService(f"http://127.0.0.1:{port}", Path(home), bare.pid)
        finally:
            bare.terminate()
            bare.wait(10)


@dataclass(frozen=True)
class WrkMeasured:
    result: WrkResult
    cpu: dict[str, float]  # seconds by role while measuring

    def line(self, label: str) -> str:
        result = self.result
        cpu = "  ".join(
            f"{role}={seconds / result.requests * 1000:.3f}"
            for role, seconds in self.cpu.items()
            if seconds > 0 or role == "service"
        )
        failed = f"  FAILED={result.failed}" if result.failed else ""
        return (
            f"{label:8} {result.per_second:8.0f} /s  p50={result.p50_ms:7.2f} ms  "
            f"p99={result.p99_ms:7.2f} ms  n={result.requests}  "
            f"cpu ms per quote: {cpu}{failed}"
        )


def _wrk_measure(
    target: RunningService, database_url: str | None, bodies: list[bytes], args: argparse.Namespace
) -> WrkMeasured:
    before = cpu_seconds(target, database_url)
    result = run_wrk(
        target.base_url,
        "/quote/v2",
        bodies,
        connections=args.concurrency,
        seconds=args.seconds,
        threads=args.wrk_threads,
    )
    after = cpu_seconds(target, database_url)
    return WrkMeasured(result, after.since(before))


def _wrk_run(
    service: RunningService,
    database_url: str | None,
    bodies: list[dict[str, Any]],
    args: argparse.Namespace,
) -> None:
    encoded = [as_json(body) for body in bodies]
    answers = uvloop.run(_first_answers(service, encoded))
    # Unmeasured: connections, first-use caches, and the chains' start-up work settle first.
    run_wrk(
        service.base_url,
        "/quote/v2",
        encoded,
        connections=args.concurrency,
        seconds=args.warmup_seconds,
        threads=args.wrk_threads,
    )
    print(
        f"wrk POST /quote/v2  kind={args.kind} database={args.database} "
        f"api_processes={args.api_processes} connections={args.concurrency} "
        f"threads={args.wrk_threads} seconds={args.seconds:g} rounds={args.rounds}"
    )
    pairs = list(zip(encoded, answers, strict=True))
    with _bare_app(pairs, args.api_processes) as bare:
        run_wrk(bare.base_url, "/quote/v2", encoded, connections=args.concurrency, seconds=1)
        ratios = []
        for _ in range(args.rounds):
            served = _wrk_measure(service, database_url, encoded, args)
            ceiling = _wrk_measure(bare, None, encoded, args)
            ratio = served.result.per_second / ceiling.result.per_second
            ratios.append(ratio)
            print(served.line("service"))
            print(ceiling.line("bare"))
            print(
                f"service/bare: throughput {ratio:.1%}  "
                f"p50 x{served.result.p50_ms / ceiling.result.p50_ms:.1f}  "
                f"p99 x{served.result.p99_ms / ceiling.result.p99_ms:.1f}"
            )
    if len(ratios) > 1:
        print("service/bare throughput by round: " + " ".join(f"{r:.1%}" for r in ratios))
    if args.api_processes > 1:
        _ceiling_scaling(pairs, encoded, args)


def _ceiling_scaling(
    pairs: list[tuple[bytes, bytes]], encoded: list[bytes], args: argparse.Namespace
) -> None:
    """The bare app on one process and on `--api-processes`, alternately: how far the ceiling
    itself scales on this machine (the load generator shares its cores), beside which the
    service's own scaling (this run's figure against a one-process run's) is to be read."""
    rates: dict[int, list[float]] = {1: [], args.api_processes: []}
    for _ in range(args.rounds):
        for processes in rates:
            with _bare_app(pairs, processes) as bare:
                run_wrk(
                    bare.base_url, "/quote/v2", encoded, connections=args.concurrency, seconds=1
                )
                measured = _wrk_measure(bare, None, encoded, args)
            rates[processes].append(measured.result.per_second)
    one, many = (sum(found) / len(found) for found in rates.values())
    print(
        f"bare on {args.api_processes} processes / on 1: {many / one:.2f}x "
        f"({many:.0f}/s against {one:.0f}/s, means of {args.rounds} rounds)"
    )


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
    parser.add_argument(
        "--wrk", action="store_true", help="measure with wrk, beside the bare-ASGI ceiling"
    )
    parser.add_argument("--seconds", type=float, default=10, help="--wrk: seconds per run")
    parser.add_argument(
        "--warmup-seconds", type=float, default=5, help="--wrk: unmeasured seconds first"
    )
    parser.add_argument("--rounds", type=int, default=1, help="--wrk: service/bare pairs")
    parser.add_argument("--wrk-threads", type=int, default=1)
    args = parser.parse_args()
    service_args = ("--api-processes", str(args.api_processes))
    with (
        database_for(args.database) as url,
        devnet_service(*service_args, database_url=url) as service,
    ):
        deployment = tomllib.loads((service.home / "deployment.toml").read_text())
        if args.wrk:
            _wrk_run(service, url, _bodies(deployment, args.kind), args)
            return
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
