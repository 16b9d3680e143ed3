"""Quotes nobody acted on, deleted once long expired (`crossfill db prune-quotes`).

Every quote stores its request before it is answered, its answer included: about 10 kB on
disk with its indexes, for quotes most of which are never deposited for. A request is pruned
when all of this holds:

- it is still `waiting` and expired before the cutoff;
- it owns no deposit address (that stays open for transfers) and is no address's child;
- nothing refers to it but its `quoted` app-fee shares and sponsor payment, which go with it:
  no deposit (by request or by order id), address transfer, transaction, journal entry,
  gasless execution, permit, nonce mapping or status event.

A deposit for a pruned order that arrives later is an unknown order's deposit: refunded to
its depositor (`ORPHANED_DEPOSIT_REFUND`), where before it would have been refunded to the
request's `refundTo` as `ORDER_EXPIRED`. Hence a cutoff days after expiry, not minutes.

Each batch is one transaction that locks the requests it deletes (PostgreSQL; SQLite has a
single writer): a deposit recorded meanwhile either commits first, and its request is no
longer selected, or waits and then finds the order unknown, as a later one would.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, and_, delete, exists, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.status import RequestStatus
from crossfill.store.tables import REQUEST_CHILDREN, AppFee, Deposit, Request, SponsorPayment

# Requests deleted per transaction: short enough not to hold the writer long.
BATCH = 500
QUOTED = "quoted"  # the state of an app-fee share and a sponsor payment until a deposit

# Allowed to refer to a prunable request, in their `quoted` state only: they go with it.
_QUOTED_WITH_IT = (AppFee, SponsorPayment)


def _prunable(expired_before: datetime) -> ColumnElement[bool]:
    return and_(
        Request.status == RequestStatus.WAITING.value,
        Request.expires_at < expired_before,
        Request.deposit_address.is_(None),
        Request.parent_request_id.is_(None),
        ~exists().where(Deposit.order_id == Request.order_id),
        *(
            ~exists().where(table.request_id == Request.id)
            for table in REQUEST_CHILDREN
            if table not in _QUOTED_WITH_IT
        ),
        ~exists().where(AppFee.request_id == Request.id, AppFee.state != QUOTED),
        ~exists().where(SponsorPayment.request_id == Request.id, SponsorPayment.state != QUOTED),
    )


async def count_prunable(
    sessions: async_sessionmaker[AsyncSession], expired_before: datetime
) -> int:
    """How many requests `prune_expired_quotes` would delete now."""
    async with sessions() as session:
        counted = await session.scalar(
            select(func.count()).select_from(Request).where(_prunable(expired_before))
        )
    return int(counted or 0)


async def prune_expired_quotes(
    sessions: async_sessionmaker[AsyncSession], expired_before: datetime, *, batch: int = BATCH
) -> int:
    """Delete the requests prunable at `expired_before`, with their quoted shares and sponsor
    payments, `batch` per transaction; how many were deleted."""
    pruned = 0
    while True:
        async with sessions() as session, session.begin():
            ids = list(
                await session.scalars(
                    select(Request.id)
                    .where(_prunable(expired_before))
                    .limit(batch)
                    .with_for_update(of=Request, skip_locked=True)
                )
            )
            if not ids:
                return pruned
            await session.execute(delete(AppFee).where(AppFee.request_id.in_(ids)))
            await session.execute(delete(SponsorPayment).where(SponsorPayment.request_id.in_(ids)))
            await session.execute(delete(Request).where(Request.id.in_(ids)))
        pruned += len(ids)
