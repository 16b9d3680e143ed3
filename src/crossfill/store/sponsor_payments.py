"""Sponsor payments: quoted with the request, due on success, pulled by the solver, or void."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.status import RequestStatus
from crossfill.store import books, solver_settled
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


async def due_on(session: AsyncSession, chain_id: int, *, limit: int) -> list[SponsorPayment]:
    return await solver_settled.waiting(session, SponsorPayment, chain_id, DUE, limit=limit)


async def settle(
    session: AsyncSession, request_id: str, *, state: str, tx_hash: str | None, now: datetime
) -> None:
    await solver_settled.settle(
        session, SponsorPayment, request_id, waiting_in=DUE, state=state, tx_hash=tx_hash, now=now
    )
    if state == PAID:
        await books.sponsored(session, request_id, now=now)
