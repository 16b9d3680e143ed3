"""The solver's reserved inventory on an EVM chain (`kinds.port.ReservedInventory`), kept on
the chain's state: its balances as the follower reads them at each head, and what the orders
in flight commit, which `app.inventory` hands it. Its marks are blocks: a fill's outputs stay
committed until the balances are read at or after the block that mined it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crossfill.domain.inventory import Amounts, Inventory, Landed, total
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.port import InventoryCurrency


@dataclass(frozen=True)
class EvmReservedInventory:
    chain: ChainRuntime

    def key(self, currency: str) -> str:
        return currency.lower()

    def landed_mark(self, fill_block: int) -> float:
        return fill_block

    def read_mark(self, key: str) -> float:
        head = self.chain.state.head
        return -1 if head is None else head.number

    def hold(
        self,
        in_flight: Amounts,
        landed: Sequence[Landed],
        owed: Amounts | None,
        in_transit: Amounts | None,
    ) -> None:
        state = self.chain.state
        state.solver_committed = total([in_flight, *(fill.outputs for fill in landed)])
        if owed is not None:
            state.solver_owed = owed
        if in_transit is not None:
            state.solver_in_transit = in_transit

    def listed(self) -> Sequence[tuple[InventoryCurrency, Inventory | None]]:
        return [
            (
                InventoryCurrency(c.address.lower(), c.symbol, c.decimals),
                self.chain.state.solver_inventory(c.address),
            )
            for c in self.chain.config.currencies
        ]

    async def free(self, currency: str) -> int | None:
        return self.chain.state.solver_free(currency)
