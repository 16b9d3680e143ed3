"""The solver's reserved inventory on a chain whose balances are read at times rather than at
blocks (the SVM chain, the perps exchange): a `kinds.port.ReservedInventory` whose marks are
the process's monotonic clock. A fill is recorded paid only once its chain shows it, so a
balance read started after the process saw the fill paid (`landed_mark`: the clock then)
shows its payment; until such a read, its outputs stay committed.

Its kind records each read of the solver's balances (`read`); `app.inventory` hands it what
the orders in flight commit (`hold`); what is committed is summed when asked, against the read
marks of that moment.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from crossfill.domain.inventory import Amounts, Inventory, Landed, unread
from crossfill.kinds.port import InventoryCurrency


class TimedInventory:
    def __init__(
        self,
        currencies: Sequence[InventoryCurrency],
        clock: Callable[[], float],
        *,
        key: Callable[[str], str],
    ) -> None:
        self.currencies = tuple(currencies)
        self.clock = clock
        self._key = key
        self._balances: dict[str, int] = {}
        self._read_at: dict[str, float] = {}
        self._in_flight: Amounts = {}
        self._landed: tuple[Landed, ...] = ()
        self._owed: Amounts = {}
        self._in_transit: Amounts = {}

    def read(self, balances: Mapping[str, int], started_at: float) -> None:
        """The solver's `balances` (by key), read by a read started at `started_at` (the
        clock's time before the read was sent)."""
        for key, amount in balances.items():
            if started_at >= self._read_at.get(key, -math.inf):
                self._balances[key] = amount
                self._read_at[key] = started_at

    def checked(self, key: str) -> bool:
        """Whether the reads show the solver's balance of `key` (a configured currency)."""
        return any(currency.key == key for currency in self.currencies)

    async def refresh_balances(self) -> None:
        """Have the balances read, where its kind reads them only when asked (a follower that
        keeps them read does nothing here). Raises `ChainError` when the chain does not
        answer."""

    def last_balance(self, key: str) -> int | None:
        """The balance of `key` as last read (None: never)."""
        return self._balances.get(key)

    def key(self, currency: str) -> str:
        return self._key(currency)

    def landed_mark(self, fill_block: int) -> float:
        return self.clock()

    def read_mark(self, key: str) -> float:
        return self._read_at.get(key, -math.inf)

    def hold(
        self,
        in_flight: Amounts,
        landed: Sequence[Landed],
        owed: Amounts | None,
        in_transit: Amounts | None,
    ) -> None:
        self._in_flight = dict(in_flight)
        self._landed = tuple(landed)
        if owed is not None:
            self._owed = dict(owed)
        if in_transit is not None:
            self._in_transit = dict(in_transit)

    def committed(self, key: str) -> int:
        """The outputs of the orders in flight, and of those paid since the balance of `key`
        was last read."""
        return self._in_flight.get(key, 0) + unread(self._landed, self.read_mark).get(key, 0)

    def inventory(self, key: str) -> Inventory | None:
        balance = self._balances.get(key)
        if balance is None:
            return None
        return Inventory(
            balance, self.committed(key), self._owed.get(key, 0), self._in_transit.get(key, 0)
        )

    def free_now(self, key: str) -> int | None:
        """What a new order may take of `key` from the balance as last read (never below 0)."""
        inventory = self.inventory(key)
        return None if inventory is None else inventory.servable

    def listed(self) -> Sequence[tuple[InventoryCurrency, Inventory | None]]:
        return [(currency, self.inventory(currency.key)) for currency in self.currencies]

    async def free(self, currency: str) -> int | None:
        return self.free_now(self.key(currency))
