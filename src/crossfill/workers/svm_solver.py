"""Solver for the SVM chain: pays pending requests bound for it from the solver vault.

A request is leased, then paid through the SVM payer (journalled, once per request):
`pending` → `submitted` once the payment is sent, → `success` once it lands at the chain's
deposit commitment. A program's refusal fails the request (`EXECUTION_REVERTED`), and the
origin chain's refunder pays the deposit back; every other failure is retried.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta

import structlog
from solders.pubkey import Pubkey
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.chains.svm_transactions import SvmPaymentOrder
from crossfill.domain.status import RequestStatus
from crossfill.loops import each_on_its_own, run_forever, wait_interval
from crossfill.runtime import SvmChainRuntime
from crossfill.store import requests
from crossfill.store.tables import Request
from crossfill.workers.svm_payer import Paid, PaymentOutcome, Refused, SvmPayer

log = structlog.get_logger(__name__)
FILL = "fill"
LEASE = timedelta(seconds=30)


class SvmSolver:
    def __init__(
        self,
        chain: SvmChainRuntime,
        payer: SvmPayer,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
        interval_seconds: float,
        owner: str,
    ) -> None:
        self.chain = chain
        self.config = chain.config
        self.payer = payer
        self.sessions = sessions
        self.now = now
        self.interval_seconds = interval_seconds
        self.owner = owner
        self._wakeup = asyncio.Event()

    def wake(self) -> None:
        self._wakeup.set()

    async def run(self) -> None:
        await run_forever(f"svm-solver-{self.config.id}", self.tick, self._wait)

    async def _wait(self) -> None:
        await wait_interval(self._wakeup, self.interval_seconds)

    async def tick(self) -> None:
        for status in (RequestStatus.PENDING, RequestStatus.SUBMITTED):
            async with self.sessions() as session, session.begin():
                claimed = await requests.claim(
                    session,
                    destination_chain_id=self.config.id,
                    status=status,
                    owner=self.owner,
                    now=self.now(),
                    lease=LEASE,
                    limit=20,
                )
            await each_on_its_own(
                f"svm-solver-{self.config.id}",
                claimed,
                self._fill,
                label=lambda request: request.id,
            )

    def order_of(self, request: Request) -> SvmPaymentOrder:
        currency = self.config.currency(request.destination_currency)
        assert currency is not None, "quoted currencies are configured ones"
        return SvmPaymentOrder(
            purpose=FILL,
            key=request.id,
            recipient=Pubkey.from_string(request.recipient),
            mint=None if currency.is_native else Pubkey.from_string(currency.address),
            amount=int(request.amount_out),
            decimals=currency.decimals,
            memo=f"crossfill fill {request.id}",
        )

    async def _fill(self, request: Request) -> None:
        outcome = await self.payer.pay(self.order_of(request))
        await self._record(request.id, outcome)

    async def _record(self, request_id: str, outcome: PaymentOutcome) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            current = await requests.get(session, request_id)
            assert current is not None
            status = RequestStatus(current.status)
            if isinstance(outcome, Refused):
                log.warning("svm fill refused", request_id=request_id, error=outcome.error)
                await requests.move(
                    session,
                    current,
                    RequestStatus.FAILURE,
                    now=now,
                    fail_reason="EXECUTION_REVERTED",
                )
                return
            if not outcome.signature:
                return
            paid = isinstance(outcome, Paid)
            await requests.record_transaction(
                session, request_id, kind=FILL, chain_id=self.config.id,
                tx_hash=outcome.signature, status="success" if paid else "pending", now=now,
                block_number=outcome.slot if isinstance(outcome, Paid) else None,
            )  # fmt: skip
            if status is RequestStatus.PENDING:
                await requests.move(session, current, RequestStatus.SUBMITTED, now=now)
            if paid:
                await requests.move(session, current, RequestStatus.SUCCESS, now=now)
            current.lease_expires_at = None
