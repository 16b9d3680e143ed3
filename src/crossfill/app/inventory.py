"""Keep every EVM chain's view of the solver's inventory (`domain.inventory`) current in this
process: what orders in flight are committed to and what the solver is owed, read from the
store into each chain's state, where quotes, `/config/v2` and the bridge limits read it
without a query of their own.

It is read again after every status change this process commits (the outbox's commit
signal) and at least every `REFRESH_SECONDS` (changes made by other processes), at most
every `MIN_GAP_SECONDS`; what is owed, which quotes do not read, every `OWED_EVERY` reads.
"""

from __future__ import annotations

import asyncio
import time

from crossfill.domain.inventory import inventories
from crossfill.kinds.evm.chain import evm_chains
from crossfill.loops import run_until_woken
from crossfill.runtime import Runtime
from crossfill.store import inventory
from crossfill.store.commit_signals import OUTBOX_EVENTS

REFRESH_SECONDS = 1.0
MIN_GAP_SECONDS = 0.1
OWED_EVERY = 10


class InventoryView:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._reads = 0
        self._last = 0.0

    async def refresh(self) -> None:
        """Read what is committed (and, every `OWED_EVERY` reads, owed) into the chains'
        states, and publish the inventories."""
        gap = self._last + MIN_GAP_SECONDS - time.monotonic()
        if gap > 0:
            await asyncio.sleep(gap)  # a burst of status changes is read once
        self._last = time.monotonic()
        chains = evm_chains(self.runtime)
        async with self.runtime.sessions() as session:
            committed = await inventory.committed(session, list(chains))
            owed = await inventory.owed(session) if self._reads % OWED_EVERY == 0 else None
        self._reads += 1
        for chain_id, chain in chains.items():
            chain.state.solver_committed = committed.get(chain_id, {})
            if owed is not None:
                chain.state.solver_owed = owed.get(chain_id, {})
        self._publish()

    def _publish(self) -> None:
        gauge = self.runtime.metrics.solver_inventory
        for chain in evm_chains(self.runtime).values():
            state, config = chain.state, chain.config
            held = inventories(state.solver_balances, state.solver_committed, state.solver_owed)
            for currency in config.currencies:
                found = held.get(currency.address.lower())
                if found is None:
                    continue
                parts = {
                    "balance": found.balance,
                    "committed": found.committed,
                    "free": found.free,
                    "owed": found.owed,
                }
                for part, amount in parts.items():
                    gauge.labels(config.id, currency.symbol, part).set(
                        amount / 10**currency.decimals
                    )

    async def run(self) -> None:
        await run_until_woken("inventory-view", self.refresh, OUTBOX_EVENTS, REFRESH_SECONDS)
