"""The perps payer's journal (`perps_payments`). The caller owns the transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import PerpsPayment

IN_FLIGHT = "signed"


async def latest(
    session: AsyncSession, *, chain_id: int, purpose: str, payment_key: str
) -> PerpsPayment | None:
    """The payment's newest attempt (the only one that may still be credited, or was)."""
    found: PerpsPayment | None = await session.scalar(
        select(PerpsPayment)
        .where(
            PerpsPayment.chain_id == chain_id,
            PerpsPayment.purpose == purpose,
            PerpsPayment.payment_key == payment_key,
        )
        .order_by(PerpsPayment.attempt.desc())
        .limit(1)
    )
    return found


async def highest_nonce(session: AsyncSession, *, signer: str) -> int:
    """The highest nonce journalled for `signer` (0 for none): the next must exceed it."""
    found = await session.scalar(
        select(func.max(PerpsPayment.nonce)).where(PerpsPayment.signer == signer)
    )
    return int(found or 0)


def record_signed(session: AsyncSession, payment: PerpsPayment) -> None:
    """Journal a signed attempt (the unique keys refuse a second attempt of the same number
    and a second action under one nonce)."""
    session.add(payment)


async def settle(
    session: AsyncSession,
    payment_id: int,
    *,
    status: str,
    now: datetime,
    tx_hash: str | None = None,
    ledger_time_ms: int | None = None,
    error: str | None = None,
) -> bool:
    """Move an in-flight attempt to credited, refused or dead; False if it was not in flight
    (another process settled it first)."""
    result = await session.execute(
        update(PerpsPayment)
        .where(PerpsPayment.id == payment_id, PerpsPayment.status == IN_FLIGHT)
        .values(
            status=status,
            tx_hash=tx_hash,
            ledger_time_ms=ledger_time_ms,
            error=error,
            updated_at=now,
        )
    )
    return bool(getattr(result, "rowcount", 0) == 1)
