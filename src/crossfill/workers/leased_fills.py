"""The loop of a solver that pays fills through a payer of its own chain kind (the SVM chain,
the perps exchange): claim the requests bound for the chain under a lease, `pending` first,
then `submitted` ones whose payment has not landed yet, and fill each on its own; and what
became of a fill's payment, recorded on its request: refused, it fails; sent, it is
`submitted`; paid, `success`.

A `pending` order is paid only if the solver's inventory there covers it, taken in the order
deposits were accepted (`workers.kind_capacity`); one it cannot cover is left for a later tick,
and refunded with SOLVER_CAPACITY_EXCEEDED once it has waited its chain's
`inventory_wait_seconds` since its deposit was accepted."""

from __future__ import annotations

import asyncio
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timedelta
from functools import cached_property, partial
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.inventory import Amounts
from crossfill.domain.status import RequestStatus
from crossfill.kinds.port import Live, LiveConfig
from crossfill.kinds.timed_inventory import TimedInventory
from crossfill.loops import each_on_its_own, run_forever, wait_interval
from crossfill.store import requests
from crossfill.store.db import as_utc
from crossfill.store.payment_journal import PaymentJournal
from crossfill.store.tables import Request
from crossfill.workers.kind_capacity import FILL, Judgement, PaidFrom
from crossfill.workers.kind_worker import KindWorker, Payer
from crossfill.workers.shown_payments import NOTHING_SHOWN, Shown, record_shown

log = structlog.get_logger(__name__)

LEASE = timedelta(seconds=30)
CLAIMED_PER_TICK = 20
CAPACITY_EXCEEDED = "SOLVER_CAPACITY_EXCEEDED"
__all__ = ["FILL", "FillRecord", "FillTransaction", "LeasedFills"]


@dataclass(frozen=True)
class FillTransaction:
    """A fill's payment as its request's `outTxs` shows it."""

    tx_hash: str
    status: str
    shown: Shown = NOTHING_SHOWN


@dataclass(frozen=True)
class FillRecord:
    """What became of a fill's payment: refused (its request fails with `fail_reason`), or
    sent, with its transaction once there is one to show, and `paid` or not yet."""

    fail_reason: str | None = None
    transaction: FillTransaction | None = None
    paid: bool = False


class PayingConfig(LiveConfig, Protocol):
    @property
    def inventory_wait_seconds(self) -> float: ...


class PayingChain(Live, Protocol):
    """A chain its kind's solver pays from: its settings, and the solver's inventory there."""

    @property
    def config(self) -> PayingConfig: ...

    @property
    def inventory(self) -> TimedInventory: ...


Chain = TypeVar("Chain", bound=PayingChain)


@dataclass(eq=False)
class LeasedFills(KindWorker[Chain], Generic[Chain, Payer]):
    """The loop of `chain`'s solver, claiming under this process's lease (`owner`) and paying
    through `payer`; its kind adds what a payment takes of the inventory (`needs`) and how a
    request is filled (`_fill`)."""

    # Whether a fill's transaction is shown from when it is sent, its hash known before it is
    # paid (an SVM signature), or only once paid (the exchange's ledger names it then).
    shown_when_sent: ClassVar[bool]
    # The journal the kind's payer pays through.
    journal: ClassVar[PaymentJournal[Any]]
    payer: Payer
    _: KW_ONLY
    owner: str
    _wakeup: asyncio.Event = field(default_factory=asyncio.Event, init=False, repr=False)

    def wake(self) -> None:
        self._wakeup.set()

    async def run(self) -> None:
        await run_forever(self.name, self.tick, self._wait, stretch_when_quiet=True)

    async def _wait(self) -> bool:
        return await wait_interval(self._wakeup, self.interval_seconds)

    def needs(self, currency: str, amount: int) -> Amounts:
        """What paying `amount` of `currency` (as a request row keeps it) takes of the
        inventory, by balance key."""
        raise NotImplementedError

    @cached_property
    def paid_from(self) -> PaidFrom:
        """The solver's inventory on the chain, as this solver pays from it."""
        return PaidFrom(self.chain.inventory, self.journal, self.needs)

    @property
    def inventory_wait_seconds(self) -> float:
        """How long an order the inventory cannot cover waits, after its deposit was accepted,
        before it is refunded (its chain's setting)."""
        return self.chain.config.inventory_wait_seconds

    async def tick(self) -> None:
        for status in (RequestStatus.PENDING, RequestStatus.SUBMITTED):
            async with self.sessions() as session, session.begin():
                claimed = await requests.claim(
                    session,
                    destination_chain_id=self.chain_id,
                    status=status,
                    owner=self.owner,
                    now=self.now(),
                    lease=LEASE,
                    limit=CLAIMED_PER_TICK,
                )
            if not claimed:
                continue
            if status is RequestStatus.PENDING:
                async with self.sessions() as session:
                    judged = await self.paid_from.judge(session, self.chain_id)
                await each_on_its_own(
                    self.name, claimed, partial(self._judged, judged=judged), label=lambda r: r.id
                )
            else:
                await each_on_its_own(self.name, claimed, self._paying, label=lambda r: r.id)

    async def _judged(self, request: Request, *, judged: Judgement) -> None:
        """A `pending` order: paid if the inventory covers it (or its payment is on its way
        already); else it waits, then is refunded once it has waited long enough."""
        if judged.may_pay(request.id):
            await self._paying(request)
            return
        needs = self.paid_from.needs(request.destination_currency, int(request.amount_out))
        waited = self.now() - as_utc(request.updated_at)
        if judged.unknown & needs.keys():
            await self._release(request.id)  # the balance is not read yet: nothing to judge
        elif waited >= timedelta(seconds=self.inventory_wait_seconds):
            log.warning("fill refused: inventory short", worker=self.name, request_id=request.id)
            await self._record(request.id, FillRecord(fail_reason=CAPACITY_EXCEEDED))
        else:
            await self._release(request.id)

    async def _paying(self, request: Request) -> None:
        self.paid_from.sending(request.id, request.destination_currency, int(request.amount_out))
        await self._fill(request)

    async def _release(self, request_id: str) -> None:
        """The order waits: its lease is let go, so the next tick judges it again."""
        async with self.sessions() as session, session.begin():
            current = await requests.get(session, request_id)
            if current is not None and current.lease_owner == self.owner:
                current.lease_expires_at = None

    async def _fill(self, request: Request) -> None:
        raise NotImplementedError

    async def _record(self, request_id: str, record: FillRecord) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            current = await requests.get(session, request_id)
            assert current is not None
            if record.fail_reason is not None:
                self.paid_from.dropped(request_id)
                await requests.move(
                    session, current, RequestStatus.FAILURE, now=now,
                    fail_reason=record.fail_reason,
                )  # fmt: skip
                return
            if self.shown_when_sent:
                await self._show(session, request_id, record.transaction, now=now)
            if RequestStatus(current.status) is RequestStatus.PENDING:
                await requests.move(session, current, RequestStatus.SUBMITTED, now=now)
            if not self.shown_when_sent:
                await self._show(session, request_id, record.transaction, now=now)
            if record.paid:
                await requests.move(session, current, RequestStatus.SUCCESS, now=now)
                self.paid_from.paid(request_id)
            current.lease_expires_at = None

    async def _show(
        self,
        session: AsyncSession,
        request_id: str,
        transaction: FillTransaction | None,
        *,
        now: datetime,
    ) -> None:
        if transaction is None:
            return
        await record_shown(
            session, request_id, transaction.shown, kind=FILL, chain_id=self.chain_id,
            tx_hash=transaction.tx_hash, status=transaction.status, now=now,
        )  # fmt: skip
