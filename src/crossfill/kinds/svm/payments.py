"""The SVM payer's journal (`svm_payments`). The caller owns the transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import SvmPayment

IN_FLIGHT = "signed"


async def latest(
    session: AsyncSession, *, chain_id: int, purpose: str, payment_key: str
) -> SvmPayment | None:
    """The payment's newest attempt (the only one that may still land, or the one that did)."""
    found: SvmPayment | None = await session.scalar(
        select(SvmPayment)
        .where(
            SvmPayment.chain_id == chain_id,
            SvmPayment.purpose == purpose,
            SvmPayment.payment_key == payment_key,
        )
        .order_by(SvmPayment.attempt.desc())
        .limit(1)
    )
    return found


async def in_flight(session: AsyncSession, *, chain_id: int) -> list[SvmPayment]:
    rows = await session.scalars(
        select(SvmPayment)
        .where(SvmPayment.chain_id == chain_id, SvmPayment.status == IN_FLIGHT)
        .order_by(SvmPayment.id)
    )
    return list(rows)


def record_signed(session: AsyncSession, payment: SvmPayment) -> None:
    """Journal a signed attempt (the unique key refuses a second attempt of the same number)."""
    session.add(payment)


async def settle(
    session: AsyncSession,
    payment_id: int,
    *,
    status: str,
    now: datetime,
    slot: int | None = None,
    error: Any = None,
) -> bool:
    """Move an in-flight attempt to landed, failed or expired; False if it was not in flight
    (another process settled it first)."""
    result = await session.execute(
        update(SvmPayment)
        .where(SvmPayment.id == payment_id, SvmPayment.status == IN_FLIGHT)
        .values(status=status, slot=slot, error=error, updated_at=now)
    )
    return bool(getattr(result, "rowcount", 0) == 1)
