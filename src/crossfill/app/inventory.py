"""Keep every EVM chain's view of the solver's inventory (`domain.inventory`) current in this
process: what orders in flight are committed to and what the solver is owed, read from the
store into each chain's state, where quotes, `/config/v2` and the bridge limits read it
without a query of their own.

An order whose fill was just mined stays committed until the chain's balance is read at or
after the fill's block (the balance as last read does not show the payment yet): the requests
that left the orders in flight since the last read are looked up for a successful fill, and
those found are kept, with their outputs, until the chain's head (where its balances were
read) reaches their block.

It is read again after every status change this process commits (the outbox's commit
signal) and at least every `REFRESH_SECONDS` (changes made by other processes), at most
every `MIN_GAP_SECONDS`; what is owed and what the rebalancer's moves have in transit, which
quotes do not read, every `OWED_EVERY` reads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.inventory import Amounts, inventories, total
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.loops import run_until_woken
from crossfill.metrics import Metrics
from crossfill.runtime import Runtime
from crossfill.store import inventory, rebalancing
from crossfill.store.commit_signals import OUTBOX_EVENTS
from crossfill.types import ChainId

REFRESH_SECONDS = 1.0
MIN_GAP_SECONDS = 0.1
OWED_EVERY = 10


class InventoryView:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        chains: Mapping[ChainId, ChainRuntime],
        metrics: Metrics,
    ) -> None:
        self.sessions = sessions
        self.chains = chains
        self.metrics = metrics
        self._reads = 0
        self._last = 0.0
        # chain id -> request id -> outputs: the orders in flight as last read
        self._in_flight: dict[int, dict[str, Amounts]] = {}
        # chain id -> request id -> (its fill's block, its outputs): filled, not yet read paid
        self._landed: dict[int, dict[str, tuple[int, Amounts]]] = {}

    async def refresh(self) -> None:
        """Read what is committed (and, every `OWED_EVERY` reads, owed) into the chains'
        states, and publish the inventories."""
        gap = self._last + MIN_GAP_SECONDS - time.monotonic()
        if gap > 0:
            await asyncio.sleep(gap)  # a burst of status changes is read once
        self._last = time.monotonic()
        chains = self.chains
        async with self.sessions() as session:
            in_flight = await inventory.in_flight(session, list(chains))
            left = {
                request_id
                for chain_id, requests in self._in_flight.items()
                for request_id in requests.keys() - in_flight.get(chain_id, {}).keys()
            }
            filled = await inventory.fill_blocks(session, left)
            owed = await inventory.owed(session) if self._reads % OWED_EVERY == 0 else None
            transit = await rebalancing.in_transit(session) if owed is not None else None
        self._reads += 1
        for chain_id, requests in self._in_flight.items():
            landed = self._landed.setdefault(chain_id, {})
            for request_id, outputs in requests.items():
                if request_id in filled:
                    landed[request_id] = (filled[request_id], outputs)
        self._in_flight = in_flight
        for chain_id, chain in chains.items():
            head = chain.state.head
            read_at = -1 if head is None else head.number
            landed = {
                request_id: entry
                for request_id, entry in self._landed.get(chain_id, {}).items()
                if entry[0] > read_at
            }
            self._landed[chain_id] = landed
            unpaid = [outputs for _block, outputs in landed.values()]
            chain.state.solver_committed = total([*in_flight.get(chain_id, {}).values(), *unpaid])
            if owed is not None:
                chain.state.solver_owed = owed.get(chain_id, {})
            if transit is not None:
                chain.state.solver_in_transit = transit.get(chain_id, {})
        self._publish()

    def _publish(self) -> None:
        gauge = self.metrics.solver_inventory
        for chain in self.chains.values():
            state, config = chain.state, chain.config
            held = inventories(
                state.solver_balances,
                state.solver_committed,
                state.solver_owed,
                state.solver_in_transit,
            )
            for currency in config.currencies:
                found = held.get(currency.address.lower())
                if found is None:
                    continue
                parts = {
                    "balance": found.balance,
                    "committed": found.committed,
                    "free": found.free,
                    "owed": found.owed,
                    "in_transit": found.in_transit,
                    "virtual": found.virtual,
                }
                for part, amount in parts.items():
                    gauge.labels(config.id, currency.symbol, part).set(
                        amount / 10**currency.decimals
                    )

    @classmethod
    def of(cls, runtime: Runtime) -> InventoryView:
        """The view of the EVM chains live in `runtime`."""
        return cls(runtime.sessions, evm_chains(runtime), runtime.metrics)

    async def run(self) -> None:
        await run_until_woken("inventory-view", self.refresh, OUTBOX_EVENTS, REFRESH_SECONDS)
