"""Which deposited orders a kind's solver (the SVM chain, the perps exchange) may pay now from
the solver's inventory there, and which must wait.

Orders are taken in the order their deposits were accepted: the payments already sent (a fill
`submitted`, or one whose attempt is journalled) are taken from the balance first, then each
order `pending` while what is left covers what paying it takes (its output and the kind's own
costs of paying, `PaidFrom.needs`), an order it cannot cover passed over so later ones that fit
go on (`domain.inventory.served_in_order`). The balance is as last read, less what the fills
this process paid since were paid (kept until a balance read started after the payment shows
it). An order not covered waits for its chain's `inventory_wait_seconds` after its deposit was
accepted, then is refunded with SOLVER_CAPACITY_EXCEEDED: never paid to fail for balance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.inventory import Amounts, Landed, served_in_order, unread
from crossfill.domain.status import RequestStatus
from crossfill.kinds.timed_inventory import TimedInventory
from crossfill.store import inventory as inventory_store
from crossfill.store.payment_journal import PaymentJournal

FILL = "fill"


@dataclass(frozen=True)
class Judgement:
    """Which orders may be paid now: `served` (covered), `journalled` (a payment already on its
    way: followed, never judged again), and the currencies whose balance is not known yet (an
    order needing one waits, neither paid nor refused)."""

    served: frozenset[str]
    journalled: frozenset[str]
    unknown: frozenset[str]

    def may_pay(self, request_id: str) -> bool:
        return request_id in self.served or request_id in self.journalled


@dataclass
class PaidFrom:
    """The solver's inventory on one chain, as its solver pays from it."""

    inventory: TimedInventory
    journal: PaymentJournal[Any]
    # What paying `amount` of `currency` (as a request row keeps it) takes, by balance key.
    needs: Callable[[str, int], Amounts]
    # request id -> what its fill takes: being paid by this process, not yet paid
    _sending: dict[str, Amounts] = field(default_factory=dict)
    # request id -> its fill, paid by this process, until a balance read shows it
    _landed: dict[str, Landed] = field(default_factory=dict)

    def sending(self, request_id: str, currency: str, amount: int) -> None:
        self._sending[request_id] = self.needs(currency, amount)

    def paid(self, request_id: str) -> None:
        """The fill is paid: its chain shows it (a balance read started from now on does)."""
        needs = self._sending.pop(request_id, None)
        if needs is not None:
            self._landed[request_id] = Landed(self.inventory.landed_mark(0), needs)

    def dropped(self, request_id: str) -> None:
        """The fill will take nothing: refused, or its order refunded."""
        self._sending.pop(request_id, None)

    def _unread(self) -> Amounts:
        read_mark = self.inventory.read_mark
        self._landed = {
            request_id: fill
            for request_id, fill in self._landed.items()
            if any(fill.mark > read_mark(key) for key in fill.outputs)
        }
        return unread(self._landed.values(), read_mark)

    async def judge(self, session: AsyncSession, chain_id: int) -> Judgement:
        """The orders in flight to `chain_id` judged against the balance (read first where its
        kind reads it on demand)."""
        await self.inventory.refresh_balances()
        queued = await inventory_store.queue(session, chain_id)
        pending = [q for q in queued if q.status is RequestStatus.PENDING]
        journalled = await self.journal.journalled(
            session, chain_id=chain_id, purpose=FILL, keys=[q.request_id for q in pending]
        )
        sent = [
            self.needs(q.currency, q.amount_out)
            for q in queued
            if q.status is RequestStatus.SUBMITTED or q.request_id in journalled
        ]
        waiting = [
            (q.request_id, self.needs(q.currency, q.amount_out))
            for q in pending
            if q.request_id not in journalled
        ]
        keys = {key for needs in [*sent, *(needs for _id, needs in waiting)] for key in needs}
        unread_paid = self._unread()
        available: dict[str, int | None] = {}
        unknown = set()
        for key in keys:
            balance = self.inventory.last_balance(key)
            if not self.inventory.checked(key):
                available[key] = None  # not among the reads: not counted
            elif balance is None:
                unknown.add(key)
                available[key] = None
            else:
                available[key] = balance - unread_paid.get(key, 0)
        served = served_in_order(available, sent, waiting)
        return Judgement(frozenset(served), frozenset(journalled), frozenset(unknown))
