"""Perps refunder: sends back, from the solver's exchange account, transfers that paid for
nothing.

A transfer is due when it was not accepted (no nonce mapping, another token or amount,
expired, or a second transfer for a paid request) or its request failed on the destination.
What landed (the deposit row's 1337 currency and amount) goes back to the request's `refundTo`
(the sender, unless the quote named another exchange account), or with no request to the
sender, through the perps payer: signed, journalled before it is posted, re-posted
identically after a crash, and done once the exchange's ledger shows it. Then the deposit's
refund is recorded with the ledger's hash and the request, if any, moves to `refund` (its
`failReason` says why).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.config.perps import PERPS_USDC_ADDRESS, PERPS_USDC_DECIMALS, PerpsExchangeConfig
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.status import RequestStatus
from crossfill.loops import each_on_its_own, run_forever
from crossfill.store import deposits, requests
from crossfill.store.tables import Deposit
from crossfill.workers.perps_payer import Credited, PerpsPayer, PerpsPaymentOrder, Refused

log = structlog.get_logger(__name__)
REFUND = "refund"


class PerpsRefunder:
    def __init__(
        self,
        config: PerpsExchangeConfig,
        payer: PerpsPayer,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
        interval_seconds: float,
    ) -> None:
        self.config = config
        self.payer = payer
        self.sessions = sessions
        self.now = now
        self.interval_seconds = interval_seconds

    async def run(self) -> None:
        await run_forever(
            f"perps-refunder-{self.config.id}",
            self.tick,
            lambda: asyncio.sleep(self.interval_seconds),
            stretch_when_quiet=True,
        )

    async def tick(self) -> None:
        async with self.sessions() as session:
            due = await deposits.due_for_refund(session, self.config.id)
        await each_on_its_own(
            f"perps-refunder-{self.config.id}", due, self._refund, label=lambda d: d.tx_hash
        )

    def order_of(self, deposit: Deposit, refund_to: str | None) -> PerpsPaymentOrder | None:
        """What landed, sent back to the request's `refundTo` (its order's refund recipient)
        or, with no request, to its sender; None for a token we do not serve."""
        if deposit.currency == PERPS_USDC_ADDRESS:
            decimals = PERPS_USDC_DECIMALS
        else:
            spot = self.config.spot_currency(deposit.currency)
            if spot is None:
                return None
            decimals = spot.decimals
        if int(deposit.amount) == 0:
            return None
        return PerpsPaymentOrder(
            purpose=REFUND,
            key=deposit.tx_hash,
            destination=refund_to or deposit.depositor,
            currency=deposit.currency,
            amount=int(deposit.amount),
            decimals=decimals,
        )

    async def _refund(self, deposit: Deposit) -> None:
        refund_to = None
        if deposit.request_id is not None:
            async with self.sessions() as session:
                request = await requests.get(session, deposit.request_id)
                refund_to = request.refund_to if request is not None else None
        order = self.order_of(deposit, refund_to)
        if order is None:
            log.warning("perps transfer not refundable", deposit=deposit.tx_hash,
                        currency=deposit.currency)  # fmt: skip
            await self._mark(deposit.id, "skipped")
            return
        outcome = await self.payer.pay(order)
        if isinstance(outcome, Credited):
            await self._refunded(deposit.id, outcome.tx_hash)
        elif isinstance(outcome, Refused):
            log.error("perps refund refused", deposit=deposit.tx_hash, error=outcome.message)
            await self._mark(deposit.id, "skipped")

    async def _mark(self, deposit_id: int, status: str) -> None:
        async with self.sessions() as session, session.begin():
            deposit = await session.get(Deposit, deposit_id)
            assert deposit is not None
            deposit.refund_status = status

    async def _refunded(self, deposit_id: int, ledger_hash: str) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            deposit = await session.get(Deposit, deposit_id)
            assert deposit is not None
            deposit.refund_status = "done"
            deposit.refund_tx_hash = ledger_hash
            deposit.refund_amount = deposit.amount
            if deposit.request_id is None or deposit.outcome == DepositVerdict.DOUBLE_SPEND:
                return
            request = await requests.get(session, deposit.request_id)
            if request is None:
                return
            await requests.record_transaction(
                session, request.id, kind=REFUND, chain_id=self.config.id,
                tx_hash=ledger_hash, status="success", now=now,
            )  # fmt: skip
            if request.status == RequestStatus.FAILURE:
                await requests.move(session, request, RequestStatus.REFUND, now=now)
        log.info("perps transfer refunded", deposit_id=deposit_id, hash=ledger_hash)
