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

from crossfill.contracts import calldata
from crossfill.domain.call_request import (
    NONCE_ALREADY_USED,
    CallRequest,
    DepositoryCall,
    sign_call_request,
)
from crossfill.errors import Reverted
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import each_on_its_own, run_until_woken
from crossfill.store import app_fee_claims, commit_signals
from crossfill.store.db import as_utc
from crossfill.store.tables import AppFeeClaim
from crossfill.types import NATIVE_EVM_ADDRESS

log = structlog.get_logger(__name__)
PURPOSE = "claim"
AUTHORISATION_SECONDS = 7 * 24 * 3600
# An expiration this close on chain is neither used (the payout might not be mined in time)
# nor replaced yet (a payout signed with it might still execute).
EXPIRY_MARGIN_SECONDS = 600


def payout_expiration(created_at: int, head_timestamp: int) -> int | None:
    """The expiration of payouts signed now: the first `created_at + k * AUTHORISATION_SECONDS`
    (k >= 1) the chain's head has not passed; None while it is within the margin of passing.

    Any earlier expiration is then below the head's timestamp, so a payout signed with it can
    no longer execute: two differently signed payouts of one claim are never both valid.
    """
    elapsed = head_timestamp - created_at
    periods = max(1, -(-elapsed // AUTHORISATION_SECONDS))
    expiration = created_at + periods * AUTHORISATION_SECONDS
    if expiration - head_timestamp < EXPIRY_MARGIN_SECONDS:
        return None
    return expiration


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
    # Signs the payouts' allocator attestations.
    allocator: LocalAccount

    async def run(self) -> None:
        await run_until_woken(
            self.name,
            self.tick,
            commit_signals.APP_FEE_CLAIMS,
            self.interval_seconds,
            stretch_when_quiet=True,
        )

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
        amount = int(claim.amount)
        call = (
            DepositoryCall(to=claim.recipient, data=b"", value=amount)
            if claim.currency == NATIVE_EVM_ADDRESS
            else DepositoryCall(
                to=claim.currency, data=calldata.erc20_transfer(claim.recipient, amount), value=0
            )
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
        signature = sign_call_request(
            self.allocator, payout, chain_id=self.config.id, depository=depository
        )
        data = calldata.depository_execute(
            [call.as_tuple() for call in payout.calls], payout.nonce, expiration, signature
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
