"""The EVM kind: each EVM chain of the deployment as the core sees a chain (`kinds.port`).

Quotes between EVM chains are the core's own planner's (`app.quotes`): an EVM chain routes
none of them. Its workers are the kind's (`kinds.evm.kind`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crossfill.domain.key_gas import EXECUTIONS_WAIT, SponsorWaiting, described
from crossfill.kinds.books_port import BooksReader
from crossfill.kinds.chain_view import ChainLiveStatus
from crossfill.kinds.chain_wire import Chain
from crossfill.kinds.evm.books_reader import EvmBooks
from crossfill.kinds.evm.config import CurrencyConfig
from crossfill.kinds.evm.fill_finality import evm_payment_final
from crossfill.kinds.evm.reserved_inventory import EvmReservedInventory
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.view import chain_wire
from crossfill.kinds.port import (
    FollowedChainBase,
    QuoteRoute,
    SolverBalance,
    solver_balances_of,
)
from crossfill.quoting.money import format_units
from crossfill.quoting.request import QuoteRequest
from crossfill.types import ChainId

if TYPE_CHECKING:
    from crossfill.runtime import Runtime


@dataclass
class EvmChain(FollowedChainBase):
    live: ChainRuntime
    route_precedence = 2

    async def check(self) -> None:
        """The node serves the configured chain, and the traces it is configured to read."""
        await self.live.client.check_identity()
        traces = self.live.config.trace_internal_transfers
        if traces is not None:
            await self.live.client.check_traces(traces)

    def wire(self, live: ChainLiveStatus, *, solver_address: str) -> Chain:
        return chain_wire(self.live.config, live, solver_address=solver_address)

    def solver_balances(self) -> Sequence[SolverBalance]:
        return solver_balances_of(self.live.state.solver_balances, self.live.config.currency)

    def reserved_inventory(self) -> EvmReservedInventory:
        return EvmReservedInventory(self.live)

    def books(self) -> BooksReader:
        return EvmBooks(self.live.config, self.live.client, self.live.follower.solver)

    def quote_route(self, request: QuoteRequest) -> QuoteRoute | None:
        return None

    async def payment_final(self, reference: str) -> bool:
        """The transaction is mined, successful, as deep as the chain's deepest tier asks (the
        repayer asks the tier of each order's value: `kinds.evm.fill_finality`)."""
        return await evm_payment_final(self.live, reference, None)

    async def genesis(self) -> str | None:
        block = await self.live.client.block_at(0)
        assert block is not None  # every chain has its block 0
        return block.hash

    def solver_shortfall(self) -> dict[str, str]:
        """What the solver's balance lacks here, in whole units by currency symbol, for the
        fills waiting on it, as this process's solver last found."""
        config = self.live.config
        lacking = {}
        for address, amount in self.live.state.solver_shortfall.items():
            currency = config.currency(address)
            if currency is not None:
                lacking[currency.symbol] = format_units(amount, currency.decimals)
        return lacking

    def low_on_gas(self) -> dict[str, str]:
        """The sending keys below their minimum gas balance here that are not being topped
        up, by role, as this process's gas keeper last found (`kinds.evm.gas_keeper`), and
        the gas sponsors whose gasless executions wait for funds (`kinds.evm.gasless_executor`)."""
        state, native = self.live.state, self.live.config.native_currency
        shown = {
            low.key.role: described(low, symbol=native.symbol, decimals=native.decimals)
            for low in state.low_on_gas
        }
        for waiting in state.sponsor_waiting.values():
            # Before the gas keeper's next read: what its gasless executor found.
            shown.setdefault(waiting.role, _described_waiting(waiting, native))
        return shown

    def rebalancing(self) -> dict[str, str]:
        """What keeps the rebalancer from refilling the solver's inventory here, by currency
        symbol, as this process's rebalancer last found (`kinds.evm.rebalancer`)."""
        return dict(self.live.state.rebalancing)


def _described_waiting(waiting: SponsorWaiting, currency: CurrencyConfig) -> str:
    """A sponsor whose gasless executions wait for funds, in words."""
    balance = format_units(waiting.balance, currency.decimals)
    needed = format_units(waiting.needed, currency.decimals)
    symbol = currency.symbol
    return f"{balance} {symbol}, below the {needed} {symbol} its next execution needs: " + (
        EXECUTIONS_WAIT
    )


def _live(chain: EvmChain) -> ChainRuntime:
    return chain.live


def evm_chains(runtime: Runtime) -> Mapping[ChainId, ChainRuntime]:
    """The EVM chains live in this process, by id: what the core's own paths (quotes between
    them, gasless execution, permits, the EVM workers) read and send through."""
    return runtime.chains_of(EvmChain, _live)
