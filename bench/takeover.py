"""Takeover: two worker processes on one PostgreSQL database (and an API process), a burst of
deposits, and the worker that signs stopped in the middle of it; how long until the other one
signs, and whether every order is still filled once or refunded, on chain.

Each round deposits `--orders` native bridges in one origin block (as `bench.burst` does) and,
once `--stop-after` of them have a fill broadcast (the solver's pending nonce on the
destination), ends the worker holding the solver key's signer lease on the destination:
- `SIGKILL` (`--kills` rounds): the standby worker must take over;
- `SIGTERM` (`--graceful` rounds): a graceful stop, the standby takes over;
- `SIGKILL, alone` (`--restarts` rounds): the standby is stopped first; the killed worker is
  started again at once and must pick its own work up.
A worker stopped beside a standby is started again once the other holds the signer lease
(it cannot sign then), as the standby of the next round.

Which process signed a fill is told by the journal (`sent_transactions.created_at`, written
before broadcast) against the moment the stopped process had exited: nothing it signed can be
later. Printed per round: the fills it signed, the round's other requests it held leased at its
exit and when those leases ran out; its last fill -> the next process's first; after its exit,
when a running process held the signer lease again (polled every 0.25 s) and the next process's
first and last fill; and on chain: orders filled (recipient paid), double fills, refunds,
stranded (neither), the solver's Filler calls that reverted.
The workers run under names of their own (`worker-1`, `worker-2`), so a worker started again
after its crash takes its own leases over at once. The default run (three kills) takes about
a minute and a quarter.
Run: `python -m bench.takeover [--kills 3] [--graceful 1] [--restarts 1] [--orders 100]`.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import aiohttp
from sqlalchemy import select

from bench.burst_orders import quoted_orders
from bench.chain_watch import rpc
from bench.common import database_for, load_average
from bench.devnet_chains import BridgeChains, bridge_chains
from bench.fill_audit import Audit, audit, balances, until_settled
from bench.origin_blocks import OriginBlocks, origin_blocks
from bench.worker_processes import SplitService, Worker, split_service
from crossfill.domain.status import RequestStatus
from crossfill.store.db import as_utc
from crossfill.store.tables import Request, SentTransaction
from tests.support.database import sessions_of


@dataclass(frozen=True)
class Stop:
    """How a round ends the signing worker."""

    label: str
    signal: signal.Signals
    standby: bool  # whether the other worker runs meanwhile (else the stopped one restarts)


KILL = Stop("SIGKILL, standby takes over", signal.SIGKILL, standby=True)
GRACEFUL = Stop("SIGTERM, standby takes over", signal.SIGTERM, standby=True)
RESTART = Stop("SIGKILL, restarted alone", signal.SIGKILL, standby=False)


@dataclass(frozen=True)
class Round:
    stop: Stop
    stopped: str  # the worker stopped
    standby_age: float  # seconds the standby had run before the stop (0: none)
    exit_seconds: float  # from the signal to the stopped process's exit
    signed_before: int  # fills the stopped process signed
    # The round's requests it had not signed a fill for and held leased at its exit, and
    # seconds after its exit when the first and the last of those leases ran out.
    leased: int
    leases_end: tuple[float, float] | None
    # Seconds after its exit, None if never: the process taking over started again and ready
    # (alone only), held the signer lease, signed its first and last fill of the round.
    ready: float | None
    lease_taken: float | None
    first_fill: float | None
    last_fill: float | None
    takeover: float | None  # the stopped process's last fill -> the next process's first
    audit: Audit


@dataclass(frozen=True)
class Bench:
    http: aiohttp.ClientSession
    service: SplitService
    chains: BridgeChains
    blocks: OriginBlocks
    args: argparse.Namespace

    async def signer(self) -> Worker | None:
        return await self.service.signer(self.chains.destination.id, self.chains.solver)

    async def first_signer(self) -> Worker:
        """The worker that signs fills on the destination, once one does."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            worker = await self.signer()
            if worker is not None:
                return worker
            await asyncio.sleep(0.5)
        raise SystemExit("no worker took the signer lease within 120 s")

    async def fills_broadcast(self) -> int:
        """The solver's pending nonce on the destination."""
        url = self.chains.destination.http_url
        return int(
            await rpc(self.http, url, "eth_getTransactionCount", [self.chains.solver, "pending"]),
            16,
        )

    async def _broadcast(self, nonce: float) -> None:
        """Until the solver's pending nonce on the destination reaches `nonce`."""
        while True:
            if await self.fills_broadcast() >= nonce:
                return
            await asyncio.sleep(0.01)

    async def round(self, stop: Stop) -> Round:
        active = await self.first_signer()
        other = next(worker for worker in self.service.workers if worker is not active)
        if not stop.standby:
            await asyncio.to_thread(other.process.stop)
        chains, http = self.chains, self.http
        orders = await quoted_orders(http, self.service.api.base_url, chains, self.args.orders)
        from_block = int(await rpc(http, chains.destination.http_url, "eth_blockNumber", []), 16)
        before = await self.fills_broadcast()
        await self.blocks.one_block([order.deposit for order in orders])
        deposited = await balances(http, chains.origin, [order.user for order in orders])
        await self._broadcast(before + self.args.stop_after * len(orders))
        signalled = time.monotonic()
        await asyncio.to_thread(_end, active, stop.signal)
        exited, exited_wall = time.monotonic(), datetime.now(UTC)
        request_ids = [order.request_id for order in orders]
        leases = await _leases_of(self.service.database_url, request_ids, active.pid, exited_wall)
        ready = None
        if not stop.standby:  # started again at once, alone
            await asyncio.to_thread(active.start)
            ready = time.monotonic() - exited
        # A stopped standby comes back once the other has taken over: it cannot sign then.
        lease_taken: list[float] = []
        watcher = asyncio.create_task(
            self._lease_taken(lease_taken, restart=active if stop.standby else None)
        )
        await until_settled(
            http,
            chains,
            orders,
            deposited,
            from_block=from_block,
            give_up_after=self.args.settle_timeout,
        )
        if lease_taken:
            await watcher  # the stopped standby's start, if begun, ends
        else:
            watcher.cancel()
        signed = await _fills_signed(self.service.database_url, request_ids)
        earlier = {request: at for request, at in signed if at <= exited_wall}
        later = sorted((at - exited_wall).total_seconds() for _, at in signed if at > exited_wall)
        last_earlier = (max(earlier.values()) - exited_wall).total_seconds() if earlier else None
        held = sorted(
            (end - exited_wall).total_seconds()
            for request, end in leases.items()
            if request not in earlier
        )
        for worker in self.service.workers:  # both running for the next round
            if worker.process.process is None or worker.process.process.poll() is not None:
                await asyncio.to_thread(worker.start)
        return Round(
            stop=stop,
            stopped=active.name,
            standby_age=signalled - other.started_at if stop.standby else 0.0,
            exit_seconds=exited - signalled,
            signed_before=len(earlier),
            leased=len(held),
            leases_end=(held[0], held[-1]) if held else None,
            ready=ready,
            lease_taken=lease_taken[0] - exited if lease_taken else None,
            first_fill=later[0] if later else None,
            last_fill=later[-1] if later else None,
            takeover=later[0] - last_earlier if later and last_earlier is not None else None,
            audit=await audit(http, chains, orders, deposited, from_block=from_block),
        )

    async def _lease_taken(self, taken: list[float], *, restart: Worker | None) -> None:
        """Notes in `taken` when a running worker holds the signer lease again (the stopped
        one's process is gone); then starts `restart` again."""
        while True:
            if await self.signer() is not None:
                break
            await asyncio.sleep(0.25)
        taken.append(time.monotonic())
        if restart is not None:
            await asyncio.to_thread(restart.start)


def _end(worker: Worker, how: signal.Signals) -> None:
    if how is signal.SIGKILL:
        worker.process.kill()
    else:
        worker.process.stop(timeout=30)


async def _leases_of(
    database_url: str, request_ids: list[str], pid: int, now: datetime
) -> dict[str, datetime]:
    """Request id -> when its lease runs out, for those of these requests still pending that
    process `pid` holds leased (a lease's owner names its process: host:pid:suffix)."""
    async with sessions_of(database_url) as sessions, sessions() as session:
        rows = await session.scalars(
            select(Request).where(
                Request.id.in_(request_ids),
                Request.status == RequestStatus.PENDING,
                Request.lease_expires_at > now,
            )
        )
        return {
            row.id: as_utc(row.lease_expires_at)
            for row in rows
            if row.lease_expires_at is not None
            and row.lease_owner is not None
            and row.lease_owner.split(":")[1] == str(pid)
        }


async def _fills_signed(database_url: str, request_ids: list[str]) -> list[tuple[str, datetime]]:
    """(request id, when) of each fill of these requests journalled (signed, before its
    broadcast)."""
    async with sessions_of(database_url) as sessions, sessions() as session:
        rows = await session.scalars(
            select(SentTransaction).where(
                SentTransaction.purpose == "fill", SentTransaction.request_id.in_(request_ids)
            )
        )
        return [(str(row.request_id), as_utc(row.created_at)) for row in rows]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def _lapse(ends: tuple[float, float] | None) -> str:
    return "" if ends is None else f" (leases out {ends[0]:.1f}-{ends[1]:.1f} s after its exit)"


def _print(done: Round) -> None:
    found = done.audit
    standby = f"standby up {done.standby_age:.0f} s" if done.stop.standby else "no standby"
    print(
        f"{done.stop.label} ({standby}): {done.stopped} exited {done.exit_seconds:.1f} s "
        f"after the signal, having signed {done.signed_before} fills and leased "
        f"{done.leased} more{_lapse(done.leases_end)}; its last fill -> the next first: "
        f"{_seconds(done.takeover)}"
    )
    restarted = "" if done.ready is None else f"restarted and ready {_seconds(done.ready)}, "
    print(
        f"  after its exit: {restarted}signer lease taken {_seconds(done.lease_taken)}, the "
        f"next process's fills from {_seconds(done.first_fill)} to {_seconds(done.last_fill)}"
    )
    print(
        f"  on chain: filled {found.filled}/{len(found.orders)}, double fills "
        f"{found.double_filled}, refunded {found.refunded}, stranded {found.stranded}, "
        f"reverted Filler calls {found.reverted_fills}"
    )


def _summary(label: str, rounds: list[Round]) -> None:
    takeovers = [done.takeover for done in rounds if done.takeover is not None]
    if not takeovers:
        return
    print(
        f"{label}: {len(rounds)} rounds, takeover median {statistics.median(takeovers):.1f} s, "
        f"max {max(takeovers):.1f} s; double fills "
        f"{sum(done.audit.double_filled for done in rounds)}, stranded "
        f"{sum(done.audit.stranded for done in rounds)}"
    )


async def _measure(service: SplitService, args: argparse.Namespace) -> None:
    chains = bridge_chains(service.deployment_path)
    timeout = aiohttp.ClientTimeout(total=60)
    plan = [KILL] * args.kills + [GRACEFUL] * args.graceful + [RESTART] * args.restarts
    rounds: list[Round] = []
    async with (
        aiohttp.ClientSession(timeout=timeout) as http,
        origin_blocks(http, chains.origin.http_url, args.block_time) as blocks,
    ):
        bench = Bench(http, service, chains, blocks, args)
        for stop in plan:
            rounds.append(await bench.round(stop))
            _print(rounds[-1])
    for stop in (KILL, GRACEFUL, RESTART):
        _summary(stop.label, [done for done in rounds if done.stop is stop])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kills", type=int, default=3, help="SIGKILL rounds with a standby")
    parser.add_argument("--graceful", type=int, default=0, help="SIGTERM rounds with a standby")
    parser.add_argument("--restarts", type=int, default=0, help="SIGKILL rounds, restarted alone")
    parser.add_argument("--orders", type=int, default=100, help="deposits per round")
    parser.add_argument(
        "--stop-after", type=float, default=0.3, help="share of fills broadcast before the stop"
    )
    parser.add_argument("--block-time", type=float, default=1.0)
    parser.add_argument("--settle-timeout", type=float, default=180)
    args = parser.parse_args()
    started = time.monotonic()
    with database_for("postgres") as database_url:
        assert database_url is not None
        with split_service(database_url, block_time=args.block_time) as service:
            print(
                f"takeover: {len(service.workers)} workers, PostgreSQL, {args.orders} deposits a "
                f"round, {args.block_time:g} s blocks, stopped after {args.stop_after:.0%} "
                f"of the fills were broadcast, {load_average()}"
            )
            asyncio.run(_measure(service, args))
    print(f"run took {time.monotonic() - started:.0f} s, {load_average()}")


if __name__ == "__main__":
    main()
