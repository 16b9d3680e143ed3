"""Sponsor collector, one per chain: pulls each due sponsor payment into the solver's wallet.

The sponsor approved the solver; the solver sends `transferFrom(sponsor, solver, amount)`. The
transaction is journalled per request like fills and refunds, so a restart resumes it rather
than pulling twice; a pull that fails (allowance withdrawn) is marked failed and logged.
"""

from __future__ import annotations

import structlog

from crossfill.contracts import calldata
from crossfill.errors import Reverted
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import each_on_its_own
from crossfill.store import sponsor_payments
from crossfill.store.tables import SponsorPayment

log = structlog.get_logger(__name__)
PURPOSE = "sponsor"


class SponsorCollector(JournalledWorker):
    job = "sponsor-collector"

    async def tick(self) -> None:
        await self.txmanager.hold_signer()  # another process signing: leave pulls to it
        async with self.sessions() as session:
            due = await sponsor_payments.due_on(session, self.config.id, limit=20)
        await each_on_its_own(
            self.name, due, self._collect, label=lambda payment: payment.request_id
        )

    async def _settle(self, request_id: str, state: str, tx_hash: str) -> None:
        async with self.sessions() as session, session.begin():
            await sponsor_payments.settle(
                session, request_id, state=state, tx_hash=tx_hash, now=self.now()
            )

    async def _collect(self, payment: SponsorPayment) -> None:
        attempt = await self.txmanager.attempt(payment.request_id, PURPOSE)
        if isinstance(attempt, Mined):
            paid = attempt.succeeded
            await self._settle(
                payment.request_id,
                sponsor_payments.PAID if paid else sponsor_payments.FAILED,
                attempt.row.tx_hash,
            )
            if not paid:
                log.error("sponsor payment reverted", request_id=payment.request_id)
            return
        if isinstance(attempt, InFlight):
            return  # sent, not mined yet
        solver = self.txmanager.account.address
        data = calldata.erc20_transfer_from(payment.sponsor, solver, int(payment.amount))
        try:
            gas = await self.gas_for(payment.currency, data)
        except Reverted as revert:
            log.error(
                "sponsor payment cannot be pulled",
                request_id=payment.request_id,
                reason=revert.reason.message,
            )
            await self._settle(payment.request_id, sponsor_payments.FAILED, "")
            return
        await self.send_estimated(
            payment.currency, data, gas, purpose=PURPOSE, request_id=payment.request_id
        )
