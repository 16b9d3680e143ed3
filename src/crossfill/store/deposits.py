"""Repository of observed deposits and the indexer's cursor. The caller owns the transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.chains.depository_logs import DepositLog
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.status import RequestStatus
from crossfill.store.tables import ChainCursor, Deposit, Request

SEEN = "seen"
CONFIRMED = "confirmed"
REORGED = "reorged"
INDEXER = "indexer"


async def record_seen(
    session: AsyncSession, chain_id: int, log: DepositLog, now: datetime, *, state: str = SEEN
) -> Deposit | None:
    """Store a deposit log once: its row when that is news (new, or revived after a reorg);
    None when it was already known (a re-scan or a hint). `state` is CONFIRMED for one found
    already deep enough (written so at once, not seen and then updated)."""
    known = await session.scalar(
        select(Deposit.id).where(
            Deposit.chain_id == chain_id,
            Deposit.tx_hash == log.tx_hash,
            Deposit.log_index == log.log_index,
        )
    )
    if known is not None:
        return await _seen_again(session, known, log, state)
    row = Deposit(
        chain_id=chain_id,
        tx_hash=log.tx_hash,
        log_index=log.log_index,
        block_number=log.block_number,
        block_hash=log.block_hash,
        order_id=log.order_id,
        depositor=log.depositor,
        currency=log.currency,
        amount=str(log.amount),
        paid_to=log.paid_to,
        state=state,
        created_at=now,
    )
    session.add(row)  # written with the session's next flush (its next statement, or commit)
    return row


async def _seen_again(
    session: AsyncSession, deposit_id: int, log: DepositLog, state: str
) -> Deposit | None:
    """A known deposit log found again. In another block it was re-included after a reorg:
    follow it there, and revive it if it had been given up as reorged (its row: news)."""
    deposit = await session.get(Deposit, deposit_id)
    assert deposit is not None
    if deposit.block_hash == log.block_hash:
        return None
    deposit.block_number = log.block_number
    deposit.block_hash = log.block_hash
    if deposit.state != REORGED:
        return None
    deposit.state = state
    return deposit


async def unconfirmed(session: AsyncSession, chain_id: int) -> list[Deposit]:
    rows = await session.scalars(
        select(Deposit)
        .where(Deposit.chain_id == chain_id, Deposit.state == SEEN)
        .order_by(Deposit.block_number, Deposit.log_index)
    )
    return list(rows)


async def confirmed_since(session: AsyncSession, chain_id: int, block_number: int) -> list[Deposit]:
    """Confirmed deposits in blocks after `block_number` (not yet final), newest first."""
    rows = await session.scalars(
        select(Deposit)
        .where(
            Deposit.chain_id == chain_id,
            Deposit.state == CONFIRMED,
            Deposit.block_number > block_number,
        )
        .order_by(Deposit.block_number.desc(), Deposit.log_index.desc())
    )
    return list(rows)


async def due_for_refund(session: AsyncSession, chain_id: int) -> list[Deposit]:
    """Confirmed deposits of the chain that paid for nothing (not accepted, or their request
    failed) and whose refund has not started, oldest first."""
    return list(
        await session.scalars(
            select(Deposit)
            .outerjoin(Request, Request.id == Deposit.request_id)
            .where(
                Deposit.chain_id == chain_id,
                Deposit.state == CONFIRMED,
                Deposit.refund_status.is_(None),
                or_(
                    Deposit.outcome != DepositVerdict.ACCEPTED,
                    Request.status == RequestStatus.FAILURE,
                ),
            )
            .order_by(Deposit.id)
        )
    )


async def accepted_for(session: AsyncSession, request_id: str) -> Deposit | None:
    return await session.scalar(
        select(Deposit).where(Deposit.request_id == request_id, Deposit.outcome == "ACCEPTED")
    )


async def cursor(session: AsyncSession, chain_id: int) -> ChainCursor | None:
    return await session.get(ChainCursor, (chain_id, INDEXER))


async def advance_cursor(
    session: AsyncSession, chain_id: int, block_number: int, block_hash: str, now: datetime
) -> None:
    """One statement once the cursor exists (no read first)."""
    moved = await session.execute(
        update(ChainCursor)
        .where(ChainCursor.chain_id == chain_id, ChainCursor.role == INDEXER)
        .values(block_number=block_number, block_hash=block_hash, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount == 0:  # type: ignore[attr-defined]
        session.add(
            ChainCursor(
                chain_id=chain_id,
                role=INDEXER,
                block_number=block_number,
                block_hash=block_hash,
                updated_at=now,
            )
        )
    await session.flush()


async def replace_refund_hash(session: AsyncSession, *, old: str, new: str) -> None:
    """A refund transaction was replaced (same nonce, higher fees): follow the new one."""
    deposit = await session.scalar(select(Deposit).where(Deposit.refund_tx_hash == old))
    if deposit is not None:
        deposit.refund_tx_hash = new
