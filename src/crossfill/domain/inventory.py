"""The solver's inventory on one chain, per currency (pure): its balance on chain, what is
committed to orders in flight, what is owed to it, and what is free.

- **committed**: the outputs of the orders whose deposit is seen or on its way (a request
  `depositing`, `pending` or `submitted`) and not yet filled: what their fills will take
  from the balance. A bare quote commits nothing.
- **owed**: deposits of filled orders not yet repaid to the solver (on their origin chain).
- **free** = balance - committed: what a new order may still take. It is negative when the
  orders in flight ask for more than the balance holds (oversubscribed).
- **in transit**: what the rebalancer's moves sent toward this chain will bring
  (`domain.rebalancing`), not yet arrived.
- **virtual** = free + in transit + owed: what the solver will hold here once what is on its
  way lands (what the rebalancer compares with the chain's levels).

Amounts are smallest units keyed by the currency's lower-case address.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

Amounts = dict[str, int]


@dataclass(frozen=True)
class Inventory:
    """One currency on one chain."""

    balance: int
    committed: int
    owed: int = 0
    in_transit: int = 0

    @property
    def free(self) -> int:
        return self.balance - self.committed

    @property
    def virtual(self) -> int:
        return self.free + self.in_transit + self.owed

    @property
    def servable(self) -> int:
        """The largest output a new order may take now (never negative)."""
        return max(0, self.free)


def fill_outputs(*, native: str, spends_currency: str, spends_amount: int, value: int) -> Amounts:
    """What one fill pays out of the solver's inventory, gas aside: the native value it sends
    (its output in the gas currency and any gas top-up) and the token it pays out."""
    outputs: Amounts = {}
    if value:
        outputs[native.lower()] = value
    currency = spends_currency.lower()
    if spends_amount:
        outputs[currency] = max(outputs.get(currency, 0), spends_amount)
    return outputs


def total(outputs: Iterable[Mapping[str, int]]) -> Amounts:
    """The sum, per currency, of several fills' outputs."""
    summed: Amounts = {}
    for amounts in outputs:
        for currency, amount in amounts.items():
            summed[currency] = summed.get(currency, 0) + amount
    return summed


def inventories(
    balances: Mapping[str, int],
    committed: Mapping[str, int],
    owed: Mapping[str, int],
    in_transit: Mapping[str, int] | None = None,
) -> dict[str, Inventory]:
    """Every currency with a balance read, its inventory."""
    transit = in_transit or {}
    return {
        currency: Inventory(
            balance, committed.get(currency, 0), owed.get(currency, 0), transit.get(currency, 0)
        )
        for currency, balance in balances.items()
    }


def shortfall(available: Mapping[str, int | None], needs: Mapping[str, int]) -> Amounts:
    """What `available` lacks for `needs`, per currency (nothing for a currency whose
    availability is not known)."""
    missing: Amounts = {}
    for currency, amount in needs.items():
        held = available.get(currency)
        if held is not None and amount > held:
            missing[currency] = amount - held
    return missing


@dataclass(frozen=True)
class Landed:
    """A fill's outputs, paid at `mark` (a block, or a time on the process's clock, as its
    chain's kind places its balance reads): still committed until the solver's balance of a
    currency is read at or after it."""

    mark: float
    outputs: Amounts


def unread(landed: Iterable[Landed], read_mark: Callable[[str], float]) -> Amounts:
    """What the fills in `landed` paid that the balances as last read (`read_mark`: where each
    currency's was read) do not show yet."""
    return total(
        {
            currency: amount
            for currency, amount in fill.outputs.items()
            if fill.mark > read_mark(currency)
        }
        for fill in landed
    )


def served_in_order(
    available: Mapping[str, int | None],
    sent: Iterable[Mapping[str, int]],
    waiting: Sequence[tuple[str, Mapping[str, int]]],
) -> set[str]:
    """Which of the `waiting` orders (id, what paying it takes), in the order given (their
    deposits accepted), `available` covers once the payments already `sent` are taken from
    it: each taken while what is left covers it, an order it cannot cover passed over so the
    later ones that fit go on. A currency whose availability is None is not counted."""
    left = dict(available)
    for needs in sent:
        for currency, amount in needs.items():
            held = left.get(currency)
            if held is not None:
                left[currency] = held - amount
    served = set()
    for order, needs in waiting:
        if shortfall(left, needs):
            continue
        served.add(order)
        for currency, amount in needs.items():
            held = left.get(currency)
            if held is not None:
                left[currency] = held - amount
    return served
