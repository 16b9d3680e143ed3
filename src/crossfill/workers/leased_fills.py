"""The loop of a solver that pays fills through a payer of its own chain kind (the SVM chain,
the perps exchange): claim the requests bound for the chain under a lease, `pending` first,
then `submitted` ones whose payment has not landed yet, and fill each on its own."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.status import RequestStatus
from crossfill.loops import each_on_its_own, run_forever, wait_interval
from crossfill.store import requests
from crossfill.store.tables import Request

LEASE = timedelta(seconds=30)
CLAIMED_PER_TICK = 20


class LeasedFills:
    def __init__(
        self,
        name: str,
        chain_id: int,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
        interval_seconds: float,
        owner: str,
    ) -> None:
        self.name = name
        self.chain_id = chain_id
        self.sessions = sessions
        self.now = now
        self.interval_seconds = interval_seconds
        self.owner = owner
        self._wakeup = asyncio.Event()

    def wake(self) -> None:
        self._wakeup.set()

    async def run(self) -> None:
        await run_forever(self.name, self.tick, self._wait, stretch_when_quiet=True)

    async def _wait(self) -> bool:
        return await wait_interval(self._wakeup, self.interval_seconds)

    async def tick(self) -> None:
        for status in (RequestStatus.PENDING, RequestStatus.SUBMITTED):
            async with self.sessions() as session, session.begin():
                claimed = await requests.claim(
                    session,
                    destination_chain_id=self.chain_id,
                    status=status,
                    owner=self.owner,
                    now=self.now(),
                    lease=LEASE,
                    limit=CLAIMED_PER_TICK,
                )
            await each_on_its_own(self.name, claimed, self._fill, label=lambda r: r.id)

    async def _fill(self, request: Request) -> None:
        raise NotImplementedError
