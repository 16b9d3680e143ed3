"""Webhook deliveries in the outbox: claim what is due, record each attempt.

Only the oldest pending event of a request can be due, so a request's events go out in
order; claims are leased (SKIP LOCKED on PostgreSQL) so several dispatchers never send the
same event at once, and a crashed dispatcher's events come due again when the lease ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import exists, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased
from sqlalchemy.orm.attributes import set_committed_value

from crossfill.store.db import as_utc
from crossfill.store.tables import ApiKey, OutboxEvent, WebhookEndpoint

PENDING, DELIVERED, FAILED, SKIPPED = "pending", "delivered", "failed", "skipped"


async def claim_due(
    session: AsyncSession, *, now: datetime, lease: timedelta, limit: int
) -> list[OutboxEvent]:
    earlier = aliased(OutboxEvent)
    blocked = exists().where(
        earlier.request_id == OutboxEvent.request_id,
        earlier.delivery == PENDING,
        earlier.id < OutboxEvent.id,
    )
    query = (
        select(OutboxEvent)
        .where(
            OutboxEvent.delivery == PENDING,
            OutboxEvent.next_attempt_at <= now,
            or_(OutboxEvent.lease_expires_at.is_(None), OutboxEvent.lease_expires_at < now),
            ~blocked,
        )
        .order_by(OutboxEvent.id)
        .limit(limit)
    )
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True, of=OutboxEvent)
    claimed = list(await session.scalars(query))
    if claimed:
        # Leased in one statement, not one a row; the rows read keep their lease unflushed.
        expires = now + lease
        await session.execute(
            update(OutboxEvent)
            .where(OutboxEvent.id.in_([event.id for event in claimed]))
            .values(lease_expires_at=expires),
            execution_options={"synchronize_session": False},
        )
        for event in claimed:
            set_committed_value(event, "lease_expires_at", expires)
    return claimed


async def endpoints_for(session: AsyncSession, api_key_ids: set[int]) -> dict[int, WebhookEndpoint]:
    rows = await session.scalars(
        select(WebhookEndpoint).where(WebhookEndpoint.api_key_id.in_(api_key_ids))
    )
    return {row.api_key_id: row for row in rows}


async def release_leases(session: AsyncSession) -> None:
    await session.execute(
        update(OutboxEvent)
        .where(OutboxEvent.delivery == PENDING, OutboxEvent.lease_expires_at.is_not(None))
        .values(lease_expires_at=None)
    )


async def settle(
    session: AsyncSession, event_ids: list[int], outcome: str, *, now: datetime
) -> None:
    """Mark events delivered or skipped, in one statement."""
    if event_ids:
        await session.execute(
            update(OutboxEvent)
            .where(OutboxEvent.id.in_(event_ids))
            .values(
                delivery=outcome,
                lease_expires_at=None,
                delivered_at=now if outcome == DELIVERED else None,
            )
        )


@dataclass(frozen=True)
class FailedDeliveries:
    """An API key's webhook deliveries that failed for good (replayable): how many, and the
    latest of them: when its event was published, and its last attempt's error."""

    api_key_id: int
    key_name: str
    count: int
    latest_event_at: datetime
    latest_error: str | None


async def failed_deliveries(session: AsyncSession) -> list[FailedDeliveries]:
    """Per API key with any, its failed deliveries, the key with the latest failure first."""
    counts = (
        select(
            OutboxEvent.api_key_id,
            func.count().label("failed"),
            func.max(OutboxEvent.id).label("last_id"),
        )
        .where(OutboxEvent.delivery == FAILED)
        .group_by(OutboxEvent.api_key_id)
        .subquery()
    )
    rows = await session.execute(
        select(counts.c.api_key_id, ApiKey.name, counts.c.failed, OutboxEvent)
        .join(OutboxEvent, OutboxEvent.id == counts.c.last_id)
        .join(ApiKey, ApiKey.id == counts.c.api_key_id)
        .order_by(counts.c.last_id.desc())
    )
    return [
        FailedDeliveries(
            api_key_id=key_id,
            key_name=name,
            count=failed,
            latest_event_at=as_utc(last.created_at),
            latest_error=last.last_error,
        )
        for key_id, name, failed, last in rows
    ]
