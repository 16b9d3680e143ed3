"""Solver for the perps exchange: pays pending requests bound for it from the solver's
exchange account.

A request is leased, then paid through the perps payer (journalled, once per request):
`pending` → `submitted` once the signed transfer is journalled and posted, → `success` once
the exchange's ledger shows the credit (the fill's `outTxs` entry carries the ledger's hash).
A refusal by the exchange fails the request (`SOLVER_BALANCE_TOO_LOW` when the solver's
account cannot cover it, else `TRANSFER_FAILED`), and the origin chain's refunder pays the
deposit back; every other failure is retried.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.record_facts import Moved
from crossfill.domain.status import RequestStatus
from crossfill.errors import ChainError
from crossfill.kinds.perps.config import PERPS_USDC_DECIMALS
from crossfill.kinds.perps.payer import (
    Credited,
    PaymentOutcome,
    PerpsPayer,
    PerpsPaymentOrder,
    Refused,
)
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.store import requests
from crossfill.store.tables import Request
from crossfill.workers.leased_fills import LeasedFills

log = structlog.get_logger(__name__)
FILL = "fill"


def fail_reason(refusal: str) -> str:
    if "insufficient balance" in refusal.lower():
        return "SOLVER_BALANCE_TOO_LOW"
    return "TRANSFER_FAILED"


class PerpsSolver(LeasedFills):
    def __init__(
        self,
        exchange: PerpsRuntime,
        payer: PerpsPayer,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
        interval_seconds: float,
        owner: str,
    ) -> None:
        super().__init__(
            f"perps-solver-{exchange.config.id}",
            exchange.config.id,
            sessions,
            now=now,
            interval_seconds=interval_seconds,
            owner=owner,
        )
        self.exchange = exchange
        self.config = exchange.config
        self.payer = payer

    def order_of(self, request: Request) -> PerpsPaymentOrder:
        currency = request.destination_currency
        spot = self.config.spot_currency(currency)
        return PerpsPaymentOrder(
            purpose=FILL,
            key=request.id,
            destination=request.recipient,
            currency=currency,
            amount=int(request.amount_out),
            decimals=spot.decimals if spot is not None else PERPS_USDC_DECIMALS,
        )

    async def _fill(self, request: Request) -> None:
        try:
            outcome = await self.payer.pay(self.order_of(request))
        except ChainError as exc:
            self.exchange.state.last_error = str(exc)
            raise
        self.exchange.state.last_error = None
        await self._record(request.id, outcome)

    async def _record(self, request_id: str, outcome: PaymentOutcome) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            current = await requests.get(session, request_id)
            assert current is not None
            status = RequestStatus(current.status)
            if isinstance(outcome, Refused):
                log.warning("perps fill refused", request_id=request_id, reason=outcome.message)
                await requests.move(
                    session, current, RequestStatus.FAILURE, now=now,
                    fail_reason=fail_reason(outcome.message),
                )  # fmt: skip
                return
            if status is RequestStatus.PENDING:
                await requests.move(session, current, RequestStatus.SUBMITTED, now=now)
            if isinstance(outcome, Credited):
                # The exchange has no blocks: `block` 0, the ledger's time as the timestamp.
                await requests.record_transaction(
                    session, request_id, kind=FILL, chain_id=self.config.id,
                    tx_hash=outcome.tx_hash, status="success", now=now, block_number=0,
                    timestamp=outcome.time_ms // 1000 if outcome.time_ms else None,
                    moved=Moved(current.destination_currency, int(current.amount_out)),
                )  # fmt: skip
                await requests.move(session, current, RequestStatus.SUCCESS, now=now)
            current.lease_expires_at = None
