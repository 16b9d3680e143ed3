"""The loop of a refunder that pays back through a payer of its own chain kind (the SVM chain,
the perps exchange): each tick, the chain's deposits due for refund, each refunded on its own;
and a refund, once paid, recorded on the deposit and on its request."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Generic

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.status import RequestStatus
from crossfill.loops import each_on_its_own, run_every
from crossfill.store import deposits, requests
from crossfill.store.tables import Deposit
from crossfill.workers.kind_worker import Chain, KindWorker, Payer
from crossfill.workers.shown_payments import NOTHING_SHOWN, Shown, record_shown

REFUND = "refund"
log = structlog.get_logger(__name__)


@dataclass(eq=False)
class DueRefunds(KindWorker[Chain], Generic[Chain, Payer]):
    """The loop of `chain`'s refunder, paying through `payer`; its kind adds how a deposit is
    paid back (`_refund`)."""

    payer: Payer

    async def run(self) -> None:
        await run_every(self.name, self.tick, self.interval_seconds, stretch_when_quiet=True)

    async def tick(self) -> None:
        async with self.sessions() as session:
            due = await deposits.due_for_refund(session, self.chain_id)
        await each_on_its_own(self.name, due, self._refund, label=lambda d: d.tx_hash)

    async def _refund(self, deposit: Deposit) -> None:
        raise NotImplementedError

    async def _skip(self, deposit_id: int, reason: str) -> None:
        async with self.sessions() as session, session.begin():
            deposit = await deposits.keep(session, deposit_id, reason, now=self.now())
        log.warning("deposit kept: not refunded", deposit=deposit.tx_hash, reason=reason)

    async def _refunded(
        self, deposit_id: int, refund_hash: str, *, shown: Shown = NOTHING_SHOWN
    ) -> bool:
        """The deposit paid back by `refund_hash`: recorded on it, and on the request it decided
        (True when that request records it), with what `shown` says of the refund when its
        chain's payer knows that at once (else its chain's watcher adds it later)."""
        now = self.now()
        async with self.sessions() as session, session.begin():
            deposit = await session.get(Deposit, deposit_id)
            assert deposit is not None
            deposit.refund_status = "done"
            deposit.refund_tx_hash = refund_hash
            deposit.refund_amount = deposit.amount
            return await self._record_on_request(session, deposit, refund_hash, shown, now=now)

    async def _record_on_request(
        self,
        session: AsyncSession,
        deposit: Deposit,
        refund_hash: str,
        shown: Shown,
        *,
        now: datetime,
    ) -> bool:
        """The paid refund of `deposit` recorded on the request it decided, which moves from
        `failure` to `refund`. Not for a stray or an excess: the request is another deposit's.
        True when recorded."""
        if not deposits.decides(deposit) or deposit.request_id is None:
            return False
        request = await requests.get(session, deposit.request_id)
        if request is None:
            return False
        await record_shown(
            session, request.id, shown, kind=REFUND, chain_id=self.chain_id, tx_hash=refund_hash,
            status="success", now=now,
        )  # fmt: skip
        if request.status == RequestStatus.FAILURE:
            await requests.move(session, request, RequestStatus.REFUND, now=now)
        return True
