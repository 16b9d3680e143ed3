"""Rows the solver settles for a request with a transaction of its own, one per request on a
chain: a permit deposit it sends (`permit_deposits`), a sponsor payment it pulls
(`sponsor_payments`). Each waits in one state, oldest first, and is settled out of it once.
Never commits: the caller owns the transaction."""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import PermitDeposit, SponsorPayment

Settled = TypeVar("Settled", PermitDeposit, SponsorPayment)


async def waiting(
    session: AsyncSession, table: type[Settled], chain_id: int, state: str, *, limit: int
) -> list[Settled]:
    """Up to `limit` of the chain's rows in `state`, the longest unchanged first."""
    return list(
        await session.scalars(
            select(table)
            .where(table.chain_id == chain_id, table.state == state)
            .order_by(table.updated_at)
            .limit(limit)
        )
    )


async def settle(
    session: AsyncSession,
    table: type[Settled],
    request_id: str,
    *,
    waiting_in: str,
    state: str,
    tx_hash: str | None,
    now: datetime,
) -> None:
    """The request's row moved to `state` with the transaction that settled it (if any),
    unless it left `waiting_in` already."""
    await session.execute(
        update(table)
        .where(table.request_id == request_id, table.state == waiting_in)
        .values(state=state, tx_hash=tx_hash, updated_at=now)
    )
