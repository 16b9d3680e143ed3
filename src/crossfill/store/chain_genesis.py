"""Which chain the stored state belongs to (its genesis block), and forgetting a chain's state
when a devnet chain starts over. The caller owns the transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import (
    REQUEST_CHILDREN,
    AddressTransfer,
    AppFeeClaim,
    ChainCursor,
    ChainGenesis,
    Deposit,
    LedgerEntry,
    Request,
    SentTransaction,
)


async def recorded(session: AsyncSession, chain_id: int) -> str | None:
    """The genesis hash the stored state of `chain_id` was recorded on, if any."""
    row = await session.get(ChainGenesis, chain_id)
    return None if row is None else row.genesis_hash


async def record(session: AsyncSession, chain_id: int, genesis_hash: str, now: datetime) -> None:
    row = await session.get(ChainGenesis, chain_id)
    if row is None:
        session.add(ChainGenesis(chain_id=chain_id, genesis_hash=genesis_hash, recorded_at=now))
    else:
        row.genesis_hash, row.recorded_at = genesis_hash, now


async def forget_chain_state(session: AsyncSession, chain_id: int) -> int:
    """Delete everything learnt from `chain_id`: requests from or to it (with their deposits,
    transfers to deposit addresses, transactions, events, fees and journal), its deposits,
    transfers, app-fee claims, journal and cursors. Operator settings (chain controls, API
    keys, webhooks) stay. Returns the requests deleted."""
    on_chain = or_(Request.origin_chain_id == chain_id, Request.destination_chain_id == chain_id)
    count = await session.scalar(select(func.count()).select_from(Request).where(on_chain))
    for child in REQUEST_CHILDREN:
        await session.execute(
            delete(child).where(child.request_id.in_(select(Request.id).where(on_chain)))
        )
    await session.execute(delete(Request).where(on_chain))
    # Claims after the shares they carried (deleted with their requests above).
    for table in (
        AppFeeClaim, Deposit, AddressTransfer, SentTransaction, ChainCursor, LedgerEntry
    ):  # fmt: skip
        await session.execute(delete(table).where(table.chain_id == chain_id))
    return count or 0
