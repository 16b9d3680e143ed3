"""What a fill takes from the solver's balance on its chain, whether the balance can pay it,
and what the balance lacks for the fills waiting on it.

A fill the solver cannot pay is never signed: refused by the node for want of funds, its nonce
would hold every later transaction of the key on that chain. Its gas counts: the fill's value
and its gas at the offered fee must fit in the gas-currency balance less what the key's
transactions in flight may still take (`TxManager.available`), and a token output in that
token's balance. Such a fill waits for a top-up (`solver_balance_wait_seconds` after its
deposit was accepted), then its order is refunded with SOLVER_BALANCE_TOO_LOW. Meanwhile what
is missing is published: on the chain's state (for /readyz) and as
`crossfill_solver_shortfall`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from crossfill.domain.fill_plan import FillPlan
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.txmanager import Call, TxManager
from crossfill.metrics import Metrics

# A waiting fill not seen short again for this long (filled, failed, or taken by another
# process) no longer counts in the published shortfall.
FORGOTTEN_AFTER = timedelta(seconds=30)

# Smallest units by lower-case currency address.
Amounts = dict[str, int]


class SolverFunds:
    def __init__(
        self,
        chain: ChainRuntime,
        txmanager: TxManager,
        metrics: Metrics,
        *,
        now: Callable[[], datetime],
    ) -> None:
        self.chain = chain
        self.txmanager = txmanager
        self.now = now
        self._gauge = metrics.solver_shortfall
        self._native = chain.config.native_currency.address.lower()
        # request id -> what its fill needs, and when it was last found short
        self._waiting: dict[str, tuple[Amounts, datetime]] = {}

    def needs(self, fill: FillPlan, call: Call | None = None) -> Amounts:
        """What `fill` takes: its value (and, given its simulated `call`, its gas) in the gas
        currency, and a token it pays out in that token."""
        needs = {self._native: fill.value if call is None else self.txmanager.cost_of(call)}
        currency = fill.spends_currency.lower()
        if currency == self._native:
            needs[self._native] = max(needs[self._native], fill.spends_amount)
        else:
            needs[currency] = fill.spends_amount
        return needs

    def _available(self, currency: str) -> int | None:
        if currency == self._native:
            return self.txmanager.available()
        return self.chain.state.solver_balance(currency)

    def known(self) -> bool:
        """Whether the gas-currency balance has been read (nothing is judged before)."""
        return self.txmanager.available() is not None

    def missing(self, needs: Amounts) -> Amounts:
        """What the balance lacks for `needs`, by currency; empty when it can pay them (or a
        balance is not read yet: nothing to say)."""
        missing = {}
        for currency, amount in needs.items():
            available = self._available(currency)
            if available is not None and amount > available:
                missing[currency] = amount - available
        return missing

    def overdue(self, pending_since: datetime) -> bool:
        """A fill waiting for funds since its deposit was accepted at `pending_since` has
        waited long enough: its order is refunded."""
        wait = timedelta(seconds=self.chain.config.solver_balance_wait_seconds)
        return self.now() - pending_since >= wait

    def waits(self, request_id: str, needs: Amounts) -> None:
        self._waiting[request_id] = (needs, self.now())

    def forget(self, request_id: str) -> None:
        self._waiting.pop(request_id, None)

    def publish(self) -> None:
        """What the balance lacks for every fill waiting on it together, on the chain's state
        and in the metric (0 for each currency that lacks nothing)."""
        cutoff = self.now() - FORGOTTEN_AFTER
        self._waiting = {
            request_id: entry for request_id, entry in self._waiting.items() if entry[1] > cutoff
        }
        total: Amounts = {}
        for needs, _seen in self._waiting.values():
            for currency, amount in needs.items():
                total[currency] = total.get(currency, 0) + amount
        missing = self.missing(total) if self._waiting else {}
        self.chain.state.solver_shortfall = missing
        config = self.chain.config
        for listed in config.currencies:
            short = missing.get(listed.address.lower(), 0)
            self._gauge.labels(config.id, listed.symbol).set(short / 10**listed.decimals)
