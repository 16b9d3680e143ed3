"""The chain client's log scan on an endpoint that takes JSON-RPC batches and on one that
refuses them (`EvmClient.scan`, then block by block: docs/deployment-file.md), against a
local anvil, beside a raw JSON-RPC round trip measured in the same run.

    .venv/bin/python -m bench.scan [--blocks 2000] [--head-scans 300]

Prints, for each mode: one block at the head (what the indexer does on each new head),
p50 / p99 and its ratio to the raw round trip; a catch-up over `--blocks` blocks, in
seconds, blocks per second and the client's CPU per block. Four log filters, as the indexer
asks (the blocks are empty: the figures are the calls' cost, not the logs').
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp
import uvloop

from bench.chain_watch import rpc
from crossfill.devnet.anvil import anvil_rpc, start_anvil
from crossfill.kinds.evm.client import EvmClient, LogFilter
from crossfill.metrics import Metrics
from crossfill.types import ChainId

CHAIN_ID = 31_337
FILTERS = [LogFilter((f"0x{index:040x}",), (f"0x{index:064x}",)) for index in range(1, 5)]


def _refusing(client: EvmClient) -> EvmClient:
    """The client as it is once its endpoint refused a batch: calls one by one."""
    client.batching.refused()
    return client


async def _head_scans(client: EvmClient, head: int, scans: int) -> list[float]:
    took = []
    for _ in range(scans):
        started = time.perf_counter()
        await client.scan(FILTERS, head, head)
        took.append(time.perf_counter() - started)
    return took


async def _round_trips(url: str, count: int) -> list[float]:
    took = []
    async with aiohttp.ClientSession() as session:
        for _ in range(count):
            started = time.perf_counter()
            await rpc(session, url, "eth_blockNumber", [])
            took.append(time.perf_counter() - started)
    return took


def _ms(seconds: list[float], cut: int) -> float:
    return statistics.quantiles(seconds, n=100)[cut - 1] * 1000


async def _measure(url: str, blocks: int, head_scans: int) -> None:
    head = int(await _block_number(url), 16)
    baseline = await _round_trips(url, head_scans)
    base_p50 = _ms(baseline, 50)
    print(
        f"raw round trip (eth_blockNumber): p50={base_p50:.3f} ms  p99={_ms(baseline, 99):.3f} ms"
    )
    for mode in ("batched", "one by one"):
        client = EvmClient(ChainId(CHAIN_ID), url, timeout_seconds=30, metrics=Metrics())
        if mode == "one by one":
            _refusing(client)
        try:
            await client.scan(FILTERS, head, head)  # connections opened
            took = await _head_scans(client, head, head_scans)
            cpu, started = time.process_time(), time.perf_counter()
            await client.scan(FILTERS, head - blocks + 1, head)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        finally:
            await client.close()
        p50 = _ms(took, 50)
        print(
            f"{mode:11} head block: p50={p50:.3f} ms (x{p50 / base_p50:.1f} the round trip)  "
            f"p99={_ms(took, 99):.3f} ms   catch-up of {blocks} blocks: {elapsed:.2f} s  "
            f"{blocks / elapsed:,.0f} blocks/s  client cpu {cpu / blocks * 1000:.3f} ms a block"
        )


async def _block_number(url: str) -> str:
    async with aiohttp.ClientSession() as session:
        found: str = await rpc(session, url, "eth_blockNumber", [])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=2000)
    parser.add_argument("--head-scans", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="crossfill-bench-scan-") as home:
        anvil = start_anvil(CHAIN_ID, log_dir=Path(home))
        try:
            anvil_rpc(anvil.rpc_url, "anvil_mine", [hex(args.blocks + 10)])
            uvloop.run(_measure(anvil.rpc_url, args.blocks, args.head_scans))
        finally:
            anvil.stop()


if __name__ == "__main__":
    main()
