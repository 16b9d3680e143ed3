"""Perps refunder: sends back, from the solver's exchange account, transfers that paid for
nothing.

A transfer is due when it was not accepted (no nonce mapping, another token or amount,
expired, or a second transfer for a paid request; the watcher journalled its refund with the
verdict) or its request failed on the destination (its refund, perps USDC of the amount
received, is journalled here). The exchange sender posts the journalled action until the
exchange's ledger shows it; then the deposit's refund is recorded with the ledger's hash and
the request, if any, moves to `refund` (its `failReason` says why).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

import structlog
from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.chains.perps_actions import SendAsset, format_amount
from crossfill.config.perps import PERPS_USDC_DECIMALS, PerpsExchangeConfig
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.perps_transfers import PERPS_USDC_TOKEN
from crossfill.domain.status import RequestStatus
from crossfill.loops import each_on_its_own, run_forever
from crossfill.store import deposits, requests
from crossfill.store.tables import Deposit, Request
from crossfill.workers.exchange_sender import ExchangeOrder, ExchangeSender, Taken
from crossfill.workers.perps_watcher import REFUND

log = structlog.get_logger(__name__)


class PerpsRefunder:
    def __init__(
        self,
        config: PerpsExchangeConfig,
        sender: ExchangeSender,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
        interval_seconds: float,
    ) -> None:
        self.config = config
        self.sender = sender
        self.sessions = sessions
        self.now = now
        self.interval_seconds = interval_seconds

    async def run(self) -> None:
        await run_forever(
            f"perps-refunder-{self.config.id}",
            self.tick,
            lambda: asyncio.sleep(self.interval_seconds),
        )

    async def tick(self) -> None:
        async with self.sessions() as session:
            due = list(
                await session.scalars(
                    select(Deposit)
                    .outerjoin(Request, Request.id == Deposit.request_id)
                    .where(
                        Deposit.chain_id == self.config.id,
                        Deposit.state == deposits.CONFIRMED,
                        Deposit.refund_status.is_(None),
                        or_(
                            Deposit.outcome != DepositVerdict.ACCEPTED,
                            Request.status == RequestStatus.FAILURE,
                        ),
                    )
                    .order_by(Deposit.id)
                )
            )
        await each_on_its_own(
            f"perps-refunder-{self.config.id}", due, self._refund, label=lambda d: d.tx_hash
        )

    def _returned_usdc(self, deposit: Deposit) -> Callable[[int], SendAsset]:
        """An accepted transfer (perps USDC of the quoted amount) sent back."""

        def build(nonce: int) -> SendAsset:
            return SendAsset(
                exchange_chain=self.config.exchange_chain,
                signature_chain_id=self.config.signature_chain,
                destination=deposit.depositor,
                amount=format_amount(int(deposit.amount), PERPS_USDC_DECIMALS),
                source_dex="",
                destination_dex="",
                token=PERPS_USDC_TOKEN,
                from_sub_account="",
                nonce_value=nonce,
            )

        return build

    async def _refund(self, deposit: Deposit) -> None:
        outcome = await self.sender.send(
            ExchangeOrder(REFUND, deposit.tx_hash, self._returned_usdc(deposit))
        )
        if isinstance(outcome, Taken):
            await self._refunded(deposit.id, outcome.ledger_hash)
        else:
            log.info("perps refund waiting", deposit=deposit.tx_hash, reason=outcome.reason)

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
