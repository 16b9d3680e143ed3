"""Until the service has recorded every order of a burst settled: its request's outcome in the
service's database (read there, from this process: the service spends nothing on it)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection

from sqlalchemy import func, select

from crossfill.domain.status import RequestStatus
from crossfill.store.tables import Request
from tests.support.database import sessions_of

SETTLED = (RequestStatus.SUCCESS, RequestStatus.FAILURE, RequestStatus.REFUND)
POLL_SECONDS = 0.1


async def until_recorded(
    database_url: str, request_ids: Collection[str], *, give_up_after: float
) -> bool:
    """Whether every one of these requests was recorded settled before `give_up_after`
    seconds."""
    deadline = time.monotonic() + give_up_after
    ids = list(request_ids)
    async with sessions_of(database_url) as sessions:
        while time.monotonic() < deadline:
            async with sessions() as session:
                left = await session.scalar(
                    select(func.count())
                    .select_from(Request)
                    .where(Request.id.in_(ids), Request.status.not_in(SETTLED))
                )
            if not left:
                return True
            await asyncio.sleep(POLL_SECONDS)
    return False
