"""Permit deposits: posted signed (`signed`), submitted on the origin by the solver (`sent`),
or `failed`. Never commits: the caller owns the transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.deposit_authorization import DepositAuthorization
from crossfill.store.solver_settled import SolverSettled
from crossfill.store.tables import PermitDeposit

SIGNED, SENT, FAILED = "signed", "sent", "failed"

# Signed ones waiting for the solver's deposit, settled sent or failed.
PERMIT_DEPOSITS = SolverSettled(PermitDeposit, waiting_in=SIGNED, succeeded=SENT, failed=FAILED)


async def get(session: AsyncSession, request_id: str) -> PermitDeposit | None:
    return await session.get(PermitDeposit, request_id)


def signed(
    request_id: str, authorization: DepositAuthorization, signature: bytes, *, now: datetime
) -> PermitDeposit:
    """The row of a freshly posted, checked signature (for the caller to add)."""
    return PermitDeposit(
        request_id=request_id,
        chain_id=authorization.chain_id,
        order_id=authorization.order_id,
        depositor=authorization.depositor.lower(),
        currency=authorization.token.lower(),
        amount=str(authorization.amount),
        valid_before=authorization.valid_before,
        signature="0x" + signature.hex(),
        state=SIGNED,
        tx_hash=None,
        updated_at=now,
    )
