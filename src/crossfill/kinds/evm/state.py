"""ChainState: the live snapshot of one chain that readers use without an RPC round trip."""

from __future__ import annotations

from dataclasses import dataclass, field

from crossfill.domain.chain_health import HeadProgress
from crossfill.domain.inventory import Inventory
from crossfill.domain.key_gas import LowKey, SponsorWaiting
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.market import MarketSnapshot

DEFAULT_PRIORITY_FEE = 1_000_000_000  # 1 gwei, when the node suggests nothing


@dataclass
class ChainState(HeadProgress):
    """Written by the chain's follower (`solver_shortfall` by the chain's solver, `low_on_gas`
    by its gas keeper, `rebalancing` by the rebalancer); read by the API and workers."""

    head: BlockHead | None = None
    priority_fee_per_gas: int | None = None
    # Lower-case currency address -> the solver's balance of it on this chain.
    solver_balances: dict[str, int] = field(default_factory=dict)
    # Lower-case currency address -> what the solver's balance lacks for the fills waiting on
    # it (`kinds.evm.solver_funds`); empty when none waits.
    solver_shortfall: dict[str, int] = field(default_factory=dict)
    # The sending keys below their minimum gas balance that are not being topped up, as the
    # chain's gas keeper last found (`kinds.evm.gas_keeper`); empty when none is.
    low_on_gas: tuple[LowKey, ...] = ()
    # Currency symbol -> what keeps the rebalancer from refilling it here, in words, as this
    # process's rebalancer last found (`domain.rebalance_health`); empty when nothing does.
    rebalancing: dict[str, str] = field(default_factory=dict)
    # Lower-case address -> a gas sponsor's balance as its gasless executor last read it, and
    # the balance its executions waiting to be signed need (`kinds.evm.gasless_executor`):
    # the gas keeper tops it up to that, and the key shows low meanwhile.
    sponsor_balances: dict[str, int] = field(default_factory=dict)
    sponsor_waiting: dict[str, SponsorWaiting] = field(default_factory=dict)
    # Lower-case currency address -> the outputs of the orders in flight to this chain (their
    # deposit seen or on its way, their fill not landed), and what deposits of this chain
    # owe the solver (`domain.inventory`), as `app.inventory` last read them from the store.
    solver_committed: dict[str, int] = field(default_factory=dict)
    solver_owed: dict[str, int] = field(default_factory=dict)
    # Lower-case currency address -> what the rebalancer's moves sent toward this chain will
    # bring (`domain.rebalancing`), as `app.inventory` last read it.
    solver_in_transit: dict[str, int] = field(default_factory=dict)
    # Pool reserves and price-feed rounds as of the last poll.
    market: MarketSnapshot = field(default_factory=lambda: MarketSnapshot({}, {}))

    def record_head(self, head: BlockHead, now: float) -> None:
        known = self.head
        advanced = known is None or head.number != known.number or head.hash != known.hash
        self.record_read(advanced=advanced, now=now)
        self.head = head

    def sponsor_balance(self, address: str) -> int | None:
        """A gas sponsor's balance as last read (None before), for its transaction manager."""
        return self.sponsor_balances.get(address.lower())

    def fee_per_gas(self, base_fee_buffer_percent: int) -> int | None:
        """What a transaction sent now should expect to pay per gas, with head-room."""
        if self.head is None or self.priority_fee_per_gas is None:
            return None
        buffered_base = self.head.base_fee_per_gas * (100 + base_fee_buffer_percent) // 100
        return buffered_base + self.priority_fee_per_gas

    def offered_fees(self) -> tuple[int, int]:
        """(maxFeePerGas, maxPriorityFeePerGas) a transaction signed now offers: twice the
        base fee plus the tip, so it stays valid through a run of full blocks."""
        tip = self.priority_fee_per_gas or DEFAULT_PRIORITY_FEE
        base = self.head.base_fee_per_gas if self.head else 0
        return 2 * base + tip, tip

    def solver_balance(self, currency: str) -> int | None:
        return self.solver_balances.get(currency.lower())

    def solver_inventory(self, currency: str) -> Inventory | None:
        """The solver's inventory of `currency` here (None while its balance is not read)."""
        key = currency.lower()
        balance = self.solver_balances.get(key)
        if balance is None:
            return None
        return Inventory(
            balance,
            self.solver_committed.get(key, 0),
            self.solver_owed.get(key, 0),
            self.solver_in_transit.get(key, 0),
        )

    def solver_free(self, currency: str) -> int | None:
        """What the solver holds of `currency` here that no order in flight is committed to
        (never below 0; None while its balance is not read)."""
        inventory = self.solver_inventory(currency)
        return None if inventory is None else inventory.servable

    def record_error(self, message: str) -> None:
        self.last_error = message
