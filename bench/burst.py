"""A burst: N native bridges deposited in the same origin block, then filled; every fill checked
on chain. Beside it, in the same run, quotes measured idle and during the burst.

Each burst's users are fresh accounts, funded on the origin, each quoted through the API with a
fresh recipient; their deposits are signed beforehand, sent together and mined in one origin
block (the bench mines the origin's blocks for the run, `bench.origin_blocks`; the destination
keeps anvil's own block time). Heads of both chains are watched over their websockets: a block's
time is when its head arrived here (the chains' timestamps are whole seconds).

Printed per burst: the orders filled (an `OrderFilled` log of the order on the destination and
its recipient's balance at least the order's output), double fills (more than one log, or the
recipient paid twice over), refunds and stranded orders (neither), the solver's Filler calls
that reverted; the destination blocks the fills spanned; seconds from the deposit block to the
last fill's block and that over the block time; per order, deposit block -> fill block p50/p99;
quote latency p50/p99 during the burst (from the deposit block to the last fill) and idle (the
`--idle-seconds` before it), from a side thread quoting `--quote-rate` times a second; the CPU
the service (and its main thread), PostgreSQL and the chains used from the deposits sent until
every fill was seen (`bench.common.cpu_seconds`), per order, and until the service had recorded
every order settled (`bench.burst_records`: work it may leave for after the last fill).
Run: `python -m bench.burst [--orders 50 200] [--block-time 1] [--database sqlite|postgres]
[--split]` (`--split`: the API and the workers in processes of their own, on PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench.burst_orders import DEPOSIT, NATIVE, quoted_orders
from bench.burst_profile import breakdown, print_breakdown, sampled
from bench.burst_records import until_recorded
from bench.chain_watch import ChainWatch, rpc, watching
from bench.common import (
    RunningService,
    cpu_seconds,
    database_for,
    devnet_service,
    load_average,
    report,
)
from bench.devnet_chains import BridgeChains, bridge_chains
from bench.fill_audit import Audit, audit, balances, until_settled
from bench.origin_blocks import OriginBlocks, origin_blocks
from bench.quote_probe import QuoteProbe
from bench.worker_processes import split_service
from crossfill.devnet import accounts
from crossfill.settings import Settings

# py-spy's time to attach to a process, before the burst's deposits are sent.
PROFILER_ATTACH_SECONDS = 1.0


@dataclass(frozen=True)
class Run:
    http: aiohttp.ClientSession
    service: RunningService
    chains: BridgeChains
    origin: ChainWatch
    destination: ChainWatch
    blocks: OriginBlocks
    probe: QuoteProbe
    args: argparse.Namespace
    database_url: str | None


async def _burst(run: Run, count: int) -> None:
    chains, http = run.chains, run.http
    orders = await quoted_orders(http, run.service.base_url, chains, count)
    idle_from = time.perf_counter()
    await asyncio.sleep(run.args.idle_seconds)
    idle = run.probe.between(idle_from, time.perf_counter())
    # The destination head before the burst: none of its fills can be in it or before.
    from_block = int(await rpc(http, chains.destination.http_url, "eth_blockNumber", []), 16)
    async with _profiled(run, count) as profiles:
        cpu_before = cpu_seconds(run.service, run.database_url)
        block = await run.blocks.one_block([order.deposit for order in orders])
        deposited_at = await run.origin.head_at(block)
        deposited = await balances(http, chains.origin, [order.user for order in orders])
        await until_settled(
            http, chains, orders, deposited, from_block=from_block, give_up_after=60 + count * 0.5
        )
        cpu = cpu_seconds(run.service, run.database_url).since(cpu_before)
        # The fills seen on chain; then until the service has recorded each order's outcome
        # (the work of a burst the service may leave for after its last fill).
        recorded = await until_recorded(
            run.database_url or Settings(home=run.service.home).database,
            [order.request_id for order in orders],
            give_up_after=60,
        )
        cpu_recorded = cpu_seconds(run.service, run.database_url).since(cpu_before)
    found = await audit(http, chains, orders, deposited, from_block=from_block)
    arrived = {number: await run.destination.head_at(number) for number in set(found.fill_blocks)}
    _print(run, count, block, found, deposited_at, arrived, idle)
    per_order = {name: f"{seconds * 1000 / count:.1f} ms" for name, seconds in cpu.items()}
    print(
        f"  CPU from the deposits to the last fill seen, per order: service {per_order['service']}"
        f" (its main threads {per_order['main_thread']}), PostgreSQL {per_order['postgres']},"
        f" chains {per_order['chains']}"
    )
    per_order = {name: f"{seconds * 1000 / count:.1f} ms" for name, seconds in cpu_recorded.items()}
    print(
        f"  ... to every order recorded settled by the service{'' if recorded else ' (gave up)'}:"
        f" service {per_order['service']} (its main threads {per_order['main_thread']}),"
        f" PostgreSQL {per_order['postgres']}"
    )
    if profiles:
        print_breakdown(breakdown(profiles), count, measured=cpu_recorded["service"])


@contextlib.asynccontextmanager
async def _profiled(run: Run, count: int) -> AsyncIterator[list[Path]]:
    """With `--profile`: the service's processes sampled by py-spy meanwhile (the raw files
    written once it ends, `bench.burst_profile`); else nothing."""
    if run.args.profile is None:
        yield []
        return
    service = run.service
    with sampled((service.pid, *service.other_pids), run.args.profile, f"burst-{count}") as paths:
        await asyncio.sleep(PROFILER_ATTACH_SECONDS)
        yield paths


def _print(
    run: Run,
    count: int,
    block: int,
    found: Audit,
    deposited_at: float,
    arrived: dict[int, float],
    idle: list[float],
) -> None:
    args = run.args
    print(f"{count} native bridges in origin block {block}, {args.block_time:g} s blocks")
    print(
        f"  filled {found.filled}/{count} (recipient balances checked), double fills "
        f"{found.double_filled}, refunded {found.refunded}, stranded {found.stranded}, "
        f"reverted Filler calls {found.reverted_fills}"
    )
    if not arrived:
        return
    first, last = min(arrived), max(arrived)
    to_last = arrived[last] - deposited_at
    print(
        f"  fills in {len(arrived)} destination blocks ({first}-{last}: {last - first + 1} spanned)"
    )
    print(
        f"  deposit block -> first fill {arrived[first] - deposited_at:.2f} s, -> last fill "
        f"{to_last:.2f} s = {to_last / args.block_time:.1f} block times"
    )
    per_order = [arrived[number] - deposited_at for number in found.fill_blocks]
    print("  " + _percentiles("deposit block -> fill block, per order", per_order))
    burst = run.probe.between(deposited_at, arrived[last])
    print("  " + _percentiles("quotes during the burst", burst))
    print("  " + _percentiles("quotes idle, before it", idle))


def _percentiles(label: str, seconds: list[float]) -> str:
    if len(seconds) < 2:
        return f"{label}: n={len(seconds)}" + (f" ({seconds[0] * 1000:.2f} ms)" if seconds else "")
    return report(label, seconds)


async def _measure(
    service: RunningService, args: argparse.Namespace, database_url: str | None
) -> None:
    chains = bridge_chains(service.home / "deployment.toml")
    probe_body = {
        "user": accounts.users()[0].address,
        "originChainId": chains.origin.id,
        "destinationChainId": chains.destination.id,
        "originCurrency": NATIVE,
        "destinationCurrency": NATIVE,
        "amount": str(DEPOSIT),
        "tradeType": "EXACT_INPUT",
    }
    timeout = aiohttp.ClientTimeout(total=60)
    async with (
        aiohttp.ClientSession(timeout=timeout) as http,
        watching(chains.origin.ws_url, chains.origin.http_url, http, pending=False) as origin,
        watching(
            chains.destination.ws_url, chains.destination.http_url, http, pending=False
        ) as destination,
        origin_blocks(http, chains.origin.http_url, args.block_time) as blocks,
    ):
        with QuoteProbe(service.base_url, probe_body, args.quote_rate) as probe:
            run = Run(http, service, chains, origin, destination, blocks, probe, args, database_url)
            for count in args.orders:
                await _burst(run, count)
        if probe.refused:
            print(f"quotes refused: {probe.refused}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--orders", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--block-time", type=float, default=1.0)
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--quote-rate", type=float, default=10, help="side quotes a second")
    parser.add_argument("--idle-seconds", type=float, default=5, help="idle quotes before each")
    parser.add_argument(
        "--split",
        action="store_true",
        help="the API (`crossfill api`) and the workers (`crossfill run --workers-only`) in "
        "processes of their own (PostgreSQL only)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="sample the service with py-spy during each burst: raw stacks written to DIR, the "
        "CPU per order by stage printed (`bench.burst_profile`)",
    )
    args = parser.parse_args()
    if args.split and args.database != "postgres":
        parser.error("--split needs --database postgres: processes share only PostgreSQL")
    with database_for(args.database) as database_url, _service(args, database_url) as service:
        layout = "API and workers apart" if args.split else "one process"
        print(
            f"bursts of native bridges, {args.block_time:g} s blocks, {args.database}, {layout}, "
            f"{load_average()}"
        )
        asyncio.run(_measure(service, args, database_url))
    print(load_average())


@contextlib.contextmanager
def _service(args: argparse.Namespace, database_url: str | None) -> Iterator[RunningService]:
    """`crossfill devnet` serving the API and running the workers in one process; `--split`:
    the bench's own chains, an API process and one workers process."""
    if not args.split:
        devnet_args = ("--block-time", str(args.block_time), "--no-svm", "--no-exchange")
        with devnet_service(*devnet_args, database_url=database_url) as service:
            yield service
        return
    assert database_url is not None
    with split_service(database_url, workers=1, block_time=args.block_time) as split:
        api = split.api
        yield RunningService(
            api.base_url,
            split.deployment_path.parent,
            api.pid,
            other_pids=tuple(worker.pid for worker in split.workers),
        )


if __name__ == "__main__":
    main()
