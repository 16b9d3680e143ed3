"""What the service recorded of a request as it went: each status it moved to and when, read
from its published status events (`store.requests.publish`), and the requests a deposit
address's later transfers made (its children)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.request_timeline import StatusChange
from crossfill.store.db import as_utc
from crossfill.store.requests import STATUS_EVENT
from crossfill.store.tables import OutboxEvent, Request


async def status_changes(session: AsyncSession, request_id: str) -> list[StatusChange]:
    """Each status the request moved to, oldest first (an event that only showed a new
    transaction, its status unchanged, is left out)."""
    events = await session.execute(
        select(OutboxEvent.created_at, OutboxEvent.payload)
        .where(OutboxEvent.request_id == request_id, OutboxEvent.event == STATUS_EVENT)
        .order_by(OutboxEvent.id)
    )
    changes: list[StatusChange] = []
    for created_at, payload in events:
        status = str(payload.get("status"))
        if not changes or changes[-1].status != status:
            changes.append(StatusChange(status, as_utc(created_at)))
    return changes


async def children(session: AsyncSession, request_id: str, *, limit: int = 100) -> list[Request]:
    """The requests later transfers to this request's deposit address made, newest first."""
    return list(
        await session.scalars(
            select(Request)
            .where(Request.parent_request_id == request_id)
            .order_by(Request.created_at.desc(), Request.id.desc())
            .limit(limit)
        )
    )
