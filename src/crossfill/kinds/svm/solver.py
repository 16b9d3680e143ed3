"""Solver for the SVM chain: pays pending requests bound for it from the solver vault.

A request is leased, then paid through the SVM payer (journalled, once per request):
`pending` → `submitted` once the payment is sent, → `success` once it lands at the chain's
deposit commitment. A program's refusal fails the request (`EXECUTION_REVERTED`), and the
origin chain's refunder pays the deposit back; every other failure is retried.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import structlog
from solders.pubkey import Pubkey
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.status import RequestStatus
from crossfill.kinds.svm.payer import Paid, PaymentOutcome, Refused, SvmPayer
from crossfill.kinds.svm.runtime import SvmChainRuntime
from crossfill.kinds.svm.transactions import SvmPaymentOrder
from crossfill.store import requests
from crossfill.store.tables import Request
from crossfill.workers.leased_fills import LeasedFills

log = structlog.get_logger(__name__)
FILL = "fill"


class SvmSolver(LeasedFills):
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
        super().__init__(
            f"svm-solver-{chain.config.id}",
            chain.config.id,
            sessions,
            now=now,
            interval_seconds=interval_seconds,
            owner=owner,
        )
        self.chain = chain
        self.config = chain.config
        self.payer = payer

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
