"""Keep every chain's view of the solver's inventory (`domain.inventory`) current in this
process, whatever its kind: what orders in flight are committed to and what the solver is
owed, read from the store and handed to each chain's reserved inventory
(`KindChain.reserved_inventory`), where quotes, `/config/v2` and the bridge limits read it
without a query of their own.

An order whose fill was just paid stays committed until the chain's balance is read after the
payment (the balance as last read does not show it yet): the requests that left the orders in
flight since the last read are looked up for a successful fill, and those found are kept, with
their outputs, until the chain's balances are read after it (on an EVM chain: at or after the
fill's block; on a chain read at times, the SVM chain and the exchange: by a read started once
this process saw the fill paid).

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

from crossfill.domain.inventory import Amounts, Landed, total
from crossfill.kinds.port import ReservedInventory
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
        chains: Mapping[ChainId, ReservedInventory],
        metrics: Metrics,
    ) -> None:
        self.sessions = sessions
        self.chains = chains
        self.metrics = metrics
        self._reads = 0
        self._last = 0.0
        # chain id -> request id -> outputs (keyed as the chain keys them): the orders in
        # flight as last read
        self._in_flight: dict[int, dict[str, Amounts]] = {}
        # request id -> its outputs as the store reads them: its plan read once while in flight
        self._outputs: dict[str, Amounts] = {}
        # chain id -> request id -> its fill, paid and not yet read paid
        self._landed: dict[int, dict[str, Landed]] = {}

    async def refresh(self) -> None:
        """Read what is committed (and, every `OWED_EVERY` reads, owed) into the chains'
        reserved inventories, and publish the inventories."""
        gap = self._last + MIN_GAP_SECONDS - time.monotonic()
        if gap > 0:
            await asyncio.sleep(gap)  # a burst of status changes is read once
        self._last = time.monotonic()
        chains = self.chains
        async with self.sessions() as session:
            rows = await inventory.in_flight(session, list(chains), self._outputs)
            left = {
                request_id
                for chain_id, requests in self._in_flight.items()
                for request_id in requests.keys() - rows.get(chain_id, {}).keys()
            }
            filled = await inventory.fill_blocks(session, left)
            owed = await inventory.owed(session) if self._reads % OWED_EVERY == 0 else None
            transit = await rebalancing.in_transit(session) if owed is not None else None
        self._reads += 1
        self._outputs = {
            request_id: outputs
            for requests in rows.values()
            for request_id, outputs in requests.items()
        }
        for chain_id, requests in self._in_flight.items():
            landed = self._landed.setdefault(chain_id, {})
            chain = chains[ChainId(chain_id)]
            for request_id, outputs in requests.items():
                if request_id in filled:
                    landed[request_id] = Landed(chain.landed_mark(filled[request_id]), outputs)
        in_flight = {
            chain_id: {
                request_id: {chains[ChainId(chain_id)].key(c): a for c, a in outputs.items()}
                for request_id, outputs in requests.items()
            }
            for chain_id, requests in rows.items()
        }
        self._in_flight = in_flight
        for chain_id, chain in chains.items():
            landed = {
                request_id: fill
                for request_id, fill in self._landed.get(chain_id, {}).items()
                if any(fill.mark > chain.read_mark(currency) for currency in fill.outputs)
            }
            self._landed[chain_id] = landed
            chain.hold(
                total(in_flight.get(chain_id, {}).values()),
                list(landed.values()),
                None if owed is None else owed.get(chain_id, {}),
                None if transit is None else transit.get(chain_id, {}),
            )
        self._publish()

    def _publish(self) -> None:
        gauge = self.metrics.solver_inventory
        for chain_id, chain in self.chains.items():
            for currency, found in chain.listed():
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
                    gauge.labels(chain_id, currency.symbol, part).set(
                        amount / 10**currency.decimals
                    )

    @classmethod
    def of(cls, runtime: Runtime) -> InventoryView:
        """The view of every chain live in `runtime`, whatever its kind."""
        chains = {
            chain_id: chain.reserved_inventory() for chain_id, chain in runtime.kind_chains.items()
        }
        return cls(runtime.sessions, chains, runtime.metrics)

    async def run(self) -> None:
        await run_until_woken("inventory-view", self.refresh, OUTBOX_EVENTS, REFRESH_SECONDS)
