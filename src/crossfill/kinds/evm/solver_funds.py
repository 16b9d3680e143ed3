"""What a fill takes from the solver's balance on its chain, whether the balance can pay it,
and what the balance lacks for the fills waiting on it.

A fill the solver cannot pay is never signed: refused by the node for want of funds, its nonce
would hold every later transaction of the key on that chain. Its gas counts: the fill's value
and its gas at the offered fee must fit in the gas-currency balance less what the key's
transactions in flight may still take (`TxManager.available`), and a token output in that
token's balance less the token outputs of the fills signed and not yet seen paid in the
balance as last read (`take`: reserved when the fill is about to be signed, until the balance
is read at or after the block that mined it). Fills are taken in the order their deposits were
accepted, while the balance covers them: an order the balance cannot cover is passed over, and
later orders that fit go on.

A fill whose output the inventory cannot cover (oversubscribed: more deposits than inventory)
waits for repayments or top-ups (`inventory_wait_seconds` after its deposit was accepted),
then its order is refunded with SOLVER_CAPACITY_EXCEEDED. One whose output is covered but
not its gas waits `solver_balance_wait_seconds`, then is refunded with SOLVER_BALANCE_TOO_LOW.
Meanwhile what is missing is published: on the chain's state (for /readyz) and as
`crossfill_solver_shortfall`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from crossfill.domain.fill_plan import FillPlan
from crossfill.domain.inventory import fill_outputs, shortfall, total
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
        # request id -> the token outputs of its fill, signed (or about to be), and the block
        # that mined it once known: counted off the balance until the balance is read there.
        self._reserved: dict[str, tuple[Amounts, int | None]] = {}
        # request id -> when it was reserved
        self._reserved_at: dict[str, datetime] = {}

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

    def outputs(self, fill: FillPlan) -> Amounts:
        """What `fill` pays out, gas aside (`domain.inventory.fill_outputs`)."""
        return fill_outputs(
            native=self._native,
            spends_currency=fill.spends_currency,
            spends_amount=fill.spends_amount,
            value=fill.value,
        )

    def _reserved_tokens(self) -> Amounts:
        """The token outputs of the fills signed and not yet paid in the balance as read."""
        head = self.chain.state.head
        read_at = -1 if head is None else head.number
        for request_id, (_amounts, mined) in list(self._reserved.items()):
            if mined is not None and mined <= read_at:
                self.release(request_id)
        return total(amounts for amounts, _mined in self._reserved.values())

    def _available(self, currency: str, excluding: str | None) -> int | None:
        if currency == self._native:
            return self.txmanager.available()
        balance = self.chain.state.solver_balance(currency)
        if balance is None:
            return None
        reserved = self._reserved_tokens().get(currency, 0)
        own = self._reserved.get(excluding or "")
        return balance - reserved + (own[0].get(currency, 0) if own is not None else 0)

    def take(self, request_id: str, fill: FillPlan, needs: Amounts) -> bool:
        """Whether the balance can pay `needs` now; if so, the fill's token output is reserved
        at once (before anything is awaited), so no other fill is signed against it."""
        if self.missing(needs, excluding=request_id):
            self.release(request_id)
            return False
        self.reserve(request_id, fill)
        return True

    def reserve(self, request_id: str, fill: FillPlan) -> None:
        """`fill` is signed (or about to be): its token output is no longer available."""
        if request_id not in self._reserved:
            tokens = {c: a for c, a in self.outputs(fill).items() if c != self._native}
            self._reserved[request_id] = (tokens, None)
            self._reserved_at[request_id] = self.now()

    def reserved(self, request_id: str) -> bool:
        return request_id in self._reserved

    def mined(self, request_id: str, block_number: int) -> None:
        """The fill was mined in `block_number`: its output leaves the balance as read there."""
        found = self._reserved.get(request_id)
        if found is not None:
            self._reserved[request_id] = (found[0], block_number)

    def release(self, request_id: str) -> None:
        """The fill will take nothing: never signed, refused, or mined reverted."""
        self._reserved.pop(request_id, None)
        self._reserved_at.pop(request_id, None)

    def forget_unsubmitted(self, submitted: set[str], *, older_than: timedelta) -> None:
        """Reservations of fills not known mined, whose requests are not `submitted` and were
        reserved `older_than` ago, are dropped: their requests were settled elsewhere (failed,
        refunded, or filled by another process)."""
        cutoff = self.now() - older_than
        for request_id, (_amounts, mined) in list(self._reserved.items()):
            settled = mined is None and request_id not in submitted
            if settled and self._reserved_at.get(request_id, cutoff) <= cutoff:
                self.release(request_id)

    def output_short(self, request_id: str, fill: FillPlan) -> bool:
        """Whether the inventory cannot cover the fill's output itself (gas aside)."""
        return bool(self.missing(self.outputs(fill), excluding=request_id))

    def known(self) -> bool:
        """Whether the gas-currency balance has been read (nothing is judged before)."""
        return self.txmanager.available() is not None

    def missing(self, needs: Amounts, *, excluding: str | None = None) -> Amounts:
        """What the balance lacks for `needs`, by currency; empty when it can pay them (or a
        balance is not read yet: nothing to say). `excluding`: the request whose fill `needs`
        are, whose own reservation is not counted against it."""
        available = {currency: self._available(currency, excluding) for currency in needs}
        return shortfall(available, needs)

    def overdue(self, pending_since: datetime, *, output_short: bool) -> bool:
        """A fill waiting for funds since its deposit was accepted at `pending_since` has
        waited long enough: its order is refunded (`output_short`: its output itself is not
        covered, it waits `inventory_wait_seconds`; else `solver_balance_wait_seconds`)."""
        config = self.chain.config
        seconds = (
            config.inventory_wait_seconds if output_short else config.solver_balance_wait_seconds
        )
        return self.now() - pending_since >= timedelta(seconds=seconds)

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
        waiting = total(needs for needs, _seen in self._waiting.values())
        missing = self.missing(waiting) if self._waiting else {}
        self.chain.state.solver_shortfall = missing
        config = self.chain.config
        for listed in config.currencies:
            short = missing.get(listed.address.lower(), 0)
            self._gauge.labels(config.id, listed.symbol).set(short / 10**listed.decimals)
