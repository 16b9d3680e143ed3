"""What became of a burst's orders, read from the chains alone: each order's fills (the
Filler's `OrderFilled` logs of its order id), what its recipient holds on the destination, what
came back to its user on the origin (a refund), and the solver's Filler calls that reverted (a
second fill the Filler refused)."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from dataclasses import dataclass

import aiohttp

from bench.burst_orders import Order
from bench.chain_watch import rpc, rpc_batch
from bench.devnet_chains import BenchChain, BridgeChains
from crossfill.contracts.abi import event

ORDER_FILLED = event("Filler", "OrderFilled").topic
REFUNDS_READ_EVERY = 2.0  # seconds, while waiting for the orders to settle


@dataclass(frozen=True)
class Outcome:
    fill_blocks: tuple[int, ...]  # the blocks of its order's OrderFilled logs
    paid: int  # what its recipient holds on the destination
    refunded: int  # what its user holds on the origin beyond what it held once deposited


@dataclass(frozen=True)
class Audit:
    orders: list[Order]
    outcomes: list[Outcome]  # one per order, in the same order
    reverted_fills: int  # the solver's Filler calls that reverted on the destination

    def _each(self) -> zip[tuple[Order, Outcome]]:
        return zip(self.orders, self.outcomes, strict=True)

    @property
    def filled(self) -> int:
        """Orders filled, their recipient paid at least what the order owes."""
        return sum(_filled(order, outcome) for order, outcome in self._each())

    @property
    def double_filled(self) -> int:
        """Orders with more than one fill, or whose recipient was paid twice over."""
        return sum(
            len(outcome.fill_blocks) > 1 or outcome.paid >= 2 * order.output
            for order, outcome in self._each()
        )

    @property
    def refunded(self) -> int:
        return sum(outcome.refunded > 0 for outcome in self.outcomes)

    @property
    def stranded(self) -> int:
        """Orders neither filled nor refunded."""
        return sum(
            not _filled(order, outcome) and outcome.refunded == 0 for order, outcome in self._each()
        )

    @property
    def fill_blocks(self) -> list[int]:
        """Each filled order's (first) fill block."""
        return [outcome.fill_blocks[0] for outcome in self.outcomes if outcome.fill_blocks]


def _filled(order: Order, outcome: Outcome) -> bool:
    return bool(outcome.fill_blocks) and outcome.paid >= order.output


async def balances(http: aiohttp.ClientSession, chain: BenchChain, holders: list[str]) -> list[int]:
    found = await rpc_batch(
        http, chain.http_url, "eth_getBalance", [[holder, "latest"] for holder in holders]
    )
    return [int(balance, 16) for balance in found]


async def fill_blocks(
    http: aiohttp.ClientSession, destination: BenchChain, from_block: int
) -> dict[str, list[int]]:
    """Order id -> the blocks of its OrderFilled logs since `from_block`."""
    logs_filter = {
        "address": destination.filler,
        "fromBlock": hex(from_block),
        "toBlock": "latest",
        "topics": [ORDER_FILLED],
    }
    found: dict[str, list[int]] = defaultdict(list)
    for log in await rpc(http, destination.http_url, "eth_getLogs", [logs_filter]):
        found[log["topics"][1].lower()].append(int(log["blockNumber"], 16))
    return found


async def until_settled(
    http: aiohttp.ClientSession,
    chains: BridgeChains,
    orders: list[Order],
    deposited: list[int],
    *,
    from_block: int,
    give_up_after: float,
) -> None:
    """Until every order is filled or its user refunded (`deposited`: the users' origin balances
    right after their deposits), or `give_up_after` seconds have passed."""
    deadline = time.monotonic() + give_up_after
    refunds_read = 0.0
    refunded: set[str] = set()
    while time.monotonic() < deadline:
        filled = await fill_blocks(http, chains.destination, from_block)
        waiting = [
            (order, before)
            for order, before in zip(orders, deposited, strict=True)
            if order.order_id not in filled and order.user not in refunded
        ]
        if not waiting:
            return
        if time.monotonic() - refunds_read > REFUNDS_READ_EVERY:
            refunds_read = time.monotonic()
            now = await balances(http, chains.origin, [order.user for order, _ in waiting])
            refunded.update(
                order.user
                for (order, before), held in zip(waiting, now, strict=True)
                if held > before
            )
        await asyncio.sleep(0.2)


async def audit(
    http: aiohttp.ClientSession,
    chains: BridgeChains,
    orders: list[Order],
    deposited: list[int],
    *,
    from_block: int,
) -> Audit:
    filled = await fill_blocks(http, chains.destination, from_block)
    paid = await balances(http, chains.destination, [order.recipient for order in orders])
    held = await balances(http, chains.origin, [order.user for order in orders])
    outcomes = [
        Outcome(tuple(filled.get(order.order_id, ())), paid_to, max(0, now - before))
        for order, paid_to, now, before in zip(orders, paid, held, deposited, strict=True)
    ]
    return Audit(orders, outcomes, await _reverted_fills(http, chains, from_block))


async def _reverted_fills(
    http: aiohttp.ClientSession, chains: BridgeChains, from_block: int
) -> int:
    destination = chains.destination
    latest = int(await rpc(http, destination.http_url, "eth_blockNumber", []), 16)
    blocks = await rpc_batch(
        http,
        destination.http_url,
        "eth_getBlockReceipts",
        [[hex(number)] for number in range(from_block, latest + 1)],
    )
    solver, filler = chains.solver.lower(), destination.filler.lower()
    return sum(
        receipt["from"].lower() == solver
        and (receipt["to"] or "").lower() == filler
        and receipt["status"] != "0x1"
        for receipts in blocks
        for receipt in receipts
    )
