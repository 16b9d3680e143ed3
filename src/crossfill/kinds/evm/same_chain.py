"""Same-chain requests settle in the user's own transaction (or the gas sponsor's, for a
gasless one: `depositing` then): seen on chain, they succeed. A standalone gasless call is not
one: its own transaction settles it (`kinds.evm.gasless_executor`), never a batch tagged with
its id."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.status import RequestStatus
from crossfill.kinds.evm.router_logs import RouterBatch
from crossfill.store import requests
from crossfill.store.tables import GaslessExecution, Request

# Waiting for the user's transaction, or for the sponsor's (POST /execute).
AWAITING = (RequestStatus.WAITING, RequestStatus.DEPOSITING)


async def awaited(
    session: AsyncSession, batches: list[RouterBatch], *, chain_id: int
) -> list[RouterBatch]:
    """The batches that settle an awaited same-chain request on this chain; the rest (the
    Filler's own batches, tagged with orderIds, and anything already settled) are skipped
    before any block is fetched for them."""
    if not batches:
        return []
    waiting = set(
        await session.scalars(
            select(Request.id).where(
                Request.id.in_({batch.request_id for batch in batches}),
                Request.status.in_(AWAITING),
                Request.origin_chain_id == chain_id,
                Request.destination_chain_id == chain_id,
                Request.id.not_in(
                    select(GaslessExecution.request_id).where(GaslessExecution.standalone)
                ),
            )
        )
    )
    return [batch for batch in batches if batch.request_id in waiting]


async def settle_batch(
    session: AsyncSession,
    batch: RouterBatch,
    *,
    chain_id: int,
    now: datetime,
    block_timestamp: int | None,
) -> bool:
    """Record the batch's transaction as the request's in and out, and mark it a success."""
    request = await requests.get(session, batch.request_id)
    if (
        request is None
        or request.status not in AWAITING
        or request.origin_chain_id != chain_id
        or request.destination_chain_id != chain_id
    ):
        return False
    for kind in ("deposit", "fill"):
        await requests.record_transaction(
            session,
            request.id,
            kind=kind,
            chain_id=chain_id,
            tx_hash=batch.tx_hash,
            status="success",
            now=now,
            block_number=batch.block_number,
            timestamp=block_timestamp,
        )
    request.origin_block_number = batch.block_number
    await requests.move(session, request, RequestStatus.SUCCESS, now=now)
    return True
