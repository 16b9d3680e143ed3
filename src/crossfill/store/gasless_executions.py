"""Gasless executions (POST /execute): accepted, sent by the key's gas sponsor, settled."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import GaslessExecution

QUEUED, SUBMITTED, MINED, REVERTED = "queued", "submitted", "mined", "reverted"
OPEN = (QUEUED, SUBMITTED)


async def key_spend(session: AsyncSession, api_key_id: int, chain_id: int) -> int:
    """What the key's sponsor has spent on `chain_id` (mined: the cost; open: the reserve)."""
    spent = await session.scalar(
        select(
            func.coalesce(
                func.sum(func.coalesce(GaslessExecution.spent_wei, GaslessExecution.reserved_wei)),
                0,
            )
        ).where(GaslessExecution.api_key_id == api_key_id, GaslessExecution.chain_id == chain_id)
    )
    return int(spent or 0)


async def open_on(
    session: AsyncSession, chain_id: int, sponsor: str, *, limit: int
) -> list[GaslessExecution]:
    """Executions of `sponsor` on `chain_id` not settled yet, oldest first."""
    rows = await session.scalars(
        select(GaslessExecution)
        .where(
            GaslessExecution.chain_id == chain_id,
            GaslessExecution.sponsor == sponsor.lower(),
            GaslessExecution.state.in_(OPEN),
        )
        .order_by(GaslessExecution.created_at)
        .limit(limit)
    )
    return list(rows)


async def of_request(session: AsyncSession, request_id: str) -> GaslessExecution | None:
    return await session.get(GaslessExecution, request_id)


async def mark_submitted(
    session: AsyncSession, request_id: str, tx_hash: str, *, now: datetime
) -> None:
    row = await session.get(GaslessExecution, request_id)
    assert row is not None
    row.state, row.tx_hash, row.updated_at = SUBMITTED, tx_hash, now


async def settle(
    session: AsyncSession,
    request_id: str,
    *,
    succeeded: bool,
    tx_hash: str,
    spent_wei: int,
    now: datetime,
) -> GaslessExecution:
    row = await session.get(GaslessExecution, request_id)
    assert row is not None
    row.state = MINED if succeeded else REVERTED
    row.tx_hash, row.spent_wei, row.updated_at = tx_hash, spent_wei, now
    return row
