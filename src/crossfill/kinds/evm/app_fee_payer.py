"""App-fee payer, one per chain: pays each filed claim out of the Depository.

Owed app fees sit in the origin chain's Depository (the users' deposits carried them). A
claim's payout is a Depository `execute` call signed by the allocator and sent by the solver
key through the journal, like a refund: a restart resumes the payout instead of sending a
second one. The service pays the gas; the recipient receives the whole amount claimed.

Every attempt for a claim signs the same CallRequest (the claim id as nonce, one expiration),
so at most one of them can ever execute, even when an attempt reverted and is sent again or
someone replays a signed one. A later expiration is signed only once the chain is past the
earlier one (`payout_expiration`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import structlog
from eth_account.signers.local import LocalAccount
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.refunds import payout_call, payout_calldata
from crossfill.domain.call_request import (
    NONCE_ALREADY_USED,
    CallRequest,
    payout_expiration,
)
from crossfill.errors import Reverted
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import each_on_its_own
from crossfill.store import app_fee_claims, commit_signals
from crossfill.store.db import as_utc
from crossfill.store.tables import AppFeeClaim
from crossfill.types import NATIVE_EVM_ADDRESS

log = structlog.get_logger(__name__)
PURPOSE = "claim"


class Transition(Protocol):
    """A claim's move in the store (`app_fee_claims.mark_submitted`, `mark_paid`)."""

    async def __call__(
        self, session: AsyncSession, claim_row_id: int, tx_hash: str | None, *, now: datetime
    ) -> None: ...


def purpose_of(claim: AppFeeClaim) -> str:
    return f"{PURPOSE}:{claim.id}"


@dataclass(eq=False)
class AppFeePayer(JournalledWorker):
    job = "app-fee-payer"
    woken_by = commit_signals.APP_FEE_CLAIMS
    # Signs the payouts' allocator attestations.
    allocator: LocalAccount

    async def tick(self) -> None:
        async with self.sessions() as session:
            due = await app_fee_claims.unsettled_on(session, self.config.id, limit=20)
        if not due:
            return
        await self.txmanager.hold_signer()  # another process signing: leave payouts to it
        await each_on_its_own(self.name, due, self._pay, label=lambda claim: claim.claim_id)

    async def _pay(self, claim: AppFeeClaim) -> None:
        purpose = purpose_of(claim)
        attempt = await self.txmanager.attempt(None, purpose)
        if isinstance(attempt, Mined):
            if attempt.succeeded:
                await self._mark(app_fee_claims.mark_paid, claim, attempt.row.tx_hash)
                return
            log.warning("app-fee payout reverted; sent again", claim_id=claim.claim_id)
        elif isinstance(attempt, InFlight):
            await self._mark(app_fee_claims.mark_submitted, claim, attempt.row.tx_hash)
            return  # sent, not mined yet
        await self._send(claim, purpose)

    async def _mark(self, transition: Transition, claim: AppFeeClaim, tx_hash: str | None) -> None:
        async with self.sessions() as session, session.begin():
            await transition(session, claim.id, tx_hash, now=self.now())

    def _payout(self, claim: AppFeeClaim, expiration: int) -> CallRequest:
        call = payout_call(
            claim.recipient,
            claim.currency,
            int(claim.amount),
            native=claim.currency == NATIVE_EVM_ADDRESS,
        )
        return CallRequest(calls=(call,), nonce=int(claim.claim_id, 16), expiration=expiration)

    async def _send(self, claim: AppFeeClaim, purpose: str) -> None:
        head = self.chain.state.head
        if head is None:
            return
        expiration = payout_expiration(int(as_utc(claim.created_at).timestamp()), head.timestamp)
        if expiration is None:
            return  # the current authorisation is about to lapse: sign the next one after
        payout = self._payout(claim, expiration)
        depository = self.config.contracts.depository
        data = payout_calldata(
            payout, self.allocator, chain_id=self.config.id, depository=depository
        )
        try:
            gas = await self.gas_for(depository, data)
        except Reverted as revert:
            if revert.reason.name == NONCE_ALREADY_USED:
                # This very payout executed (someone sent our signed request): it is paid.
                await self._mark(app_fee_claims.mark_paid, claim, None)
                return
            log.error(
                "app-fee payout cannot execute; retried",
                claim_id=claim.claim_id,
                reason=revert.reason.message,
            )
            return
        row = await self.send_estimated(depository, data, gas, purpose=purpose, request_id=None)
        await self._mark(app_fee_claims.mark_submitted, claim, row.tx_hash)
