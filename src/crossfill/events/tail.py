"""Follows the outbox and hands each new status event to the hub.

The outbox is the durable record, so every API process can tail it: with SQLite (one process)
and with PostgreSQL (many processes, any of them or a worker writing). On PostgreSQL the
writer's `NOTIFY crossfill_outbox` (sent on commit, see `store.requests.publish`) wakes the
tail at once through `LISTEN`; otherwise it polls. A dropped notification only delays an
update until the next poll.
"""

from __future__ import annotations

import asyncio
import time

import structlog
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.events.hub import StatusHub
from crossfill.loops import run_forever, stop_tasks, wait_interval
from crossfill.store import outbox_signal, pg_notify
from crossfill.store.tables import OutboxEvent

log = structlog.get_logger(__name__)
CHANNEL = "crossfill_outbox"
BATCH = 500
# PostgreSQL hands out ids at insert but commits in any order: an event with a lower id can
# become visible after a higher one was read. So each read looks this many ids back and skips
# those already sent.
LATE_COMMIT_WINDOW = 200


def websocket_message(event: OutboxEvent) -> dict[str, object]:
    return {
        "event": event.event,
        "data": event.payload,
        "publishedAt": int(time.time() * 1000),
    }


class OutboxTail:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        hub: StatusHub,
        *,
        database_url: str,
        poll_seconds: float = 0.1,
    ) -> None:
        self.sessions = sessions
        self.hub = hub
        self.database_url = database_url
        self.poll_seconds = poll_seconds
        self._last_id: int | None = None
        self._sent: dict[int, None] = {}  # recently sent ids, oldest first
        self._priming = asyncio.Lock()
        self._floor = 0  # events up to here predate every current subscription
        self._wakeup = asyncio.Event()

    async def run(self) -> None:
        listening = asyncio.create_task(
            pg_notify.listen(self.database_url, CHANNEL, lambda _payload: self._wakeup.set()),
            name="outbox-listen",
        )
        outbox_signal.register(self._wakeup)
        try:
            await run_forever("outbox-tail", self.tick, self._wait)
        finally:
            outbox_signal.unregister(self._wakeup)
            await stop_tasks([listening])

    async def _wait(self) -> bool:
        return await wait_interval(self._wakeup, self.poll_seconds)

    async def prime(self) -> None:
        """Called before a subscription is confirmed: from here on nothing is missed."""
        async with self._priming:
            if self._last_id is None:
                async with self.sessions() as session:
                    newest = await session.scalar(select(func.max(OutboxEvent.id)))
                self._last_id = self._floor = int(newest or 0)

    async def tick(self) -> None:
        if not self.hub.watched:
            self._last_id = None  # nobody listens: no database reads at all
            return
        await self.prime()
        assert self._last_id is not None
        async with self.sessions() as session:
            events = list(
                await session.scalars(
                    select(OutboxEvent)
                    .where(OutboxEvent.id > max(self._floor, self._last_id - LATE_COMMIT_WINDOW))
                    .order_by(OutboxEvent.id)
                    .limit(BATCH + LATE_COMMIT_WINDOW)
                )
            )
        for event in events:
            if event.id in self._sent:
                continue
            self.hub.dispatch(event.request_id, websocket_message(event))
            self._sent[event.id] = None
            self._last_id = max(self._last_id, event.id)
        while len(self._sent) > 4 * LATE_COMMIT_WINDOW + BATCH:
            del self._sent[next(iter(self._sent))]
