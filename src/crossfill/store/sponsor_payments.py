"""Sponsor payments: quoted with the request, due on success, pulled by the solver, or void."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.status import RequestStatus
from crossfill.store import books
from crossfill.store.solver_settled import SolverSettled
from crossfill.store.tables import Request, SponsorPayment

QUOTED, DUE, PAID, FAILED, VOID = "quoted", "due", "paid", "failed", "void"


async def follow_status(session: AsyncSession, request: Request, *, now: datetime) -> None:
    """Success makes the payment due; a refund voids it (nothing was sponsored)."""
    if request.status == RequestStatus.SUCCESS:
        state = DUE
    elif request.status == RequestStatus.REFUND:
        state = VOID
    else:
        return
    await session.execute(
        update(SponsorPayment)
        .where(SponsorPayment.request_id == request.id, SponsorPayment.state == QUOTED)
        .values(state=state, updated_at=now)
    )


# Due ones waiting for the solver's pull, settled paid (and booked) or failed.
SPONSOR_PAYMENTS = SolverSettled(
    SponsorPayment, waiting_in=DUE, succeeded=PAID, failed=FAILED, on_success=books.sponsored
)
