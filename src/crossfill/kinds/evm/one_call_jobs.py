"""A worker that makes one journalled call per stored job (the permit depositor's deposit,
the sponsor collector's pull): the journal's attempt of the job's request decides what is
left to do, so a restart resumes the call rather than making it twice.

For each due job: a call mined settles the job (succeeded or reverted); one in flight waits; a
job the worker gives up before sending (`unsendable`) or whose call the chain refuses to
estimate settles as failed, unsent; otherwise the call is journalled and sent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.errors import Reverted
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import each_on_its_own
from crossfill.store.solver_settled import SolverSettled

log = structlog.get_logger(__name__)

# How many due jobs one tick takes.
TICK_LIMIT = 20


JobT = TypeVar("JobT")


@dataclass(frozen=True)
class Call:
    """The job's call: `data` to the contract `to`."""

    to: str
    data: bytes


@dataclass(eq=False)
class OneCallWorker(JournalledWorker, Generic[JobT]):
    # The journal's purpose of the worker's calls, and what its log lines call one.
    purpose: ClassVar[str]
    what: ClassVar[str]
    # The stored jobs (rows of JobT).
    jobs: ClassVar[SolverSettled[Any]]

    async def due(self, session: AsyncSession, limit: int) -> Sequence[JobT]:
        """The jobs waiting for their call on this chain, oldest first."""
        return await self.jobs.waiting(session, self.config.id, limit=limit)

    async def settle(
        self, session: AsyncSession, job: JobT, *, succeeded: bool, tx_hash: str | None
    ) -> None:
        """Record the job's end: its call `succeeded` or not (`tx_hash` None: never sent)."""
        await self.jobs.settle(
            session, self.request_of(job), succeeded=succeeded, tx_hash=tx_hash, now=self.now()
        )

    def request_of(self, job: JobT) -> str:
        """The request the job's call is journalled under."""
        raise NotImplementedError

    def call(self, job: JobT) -> Call:
        """The job's call."""
        raise NotImplementedError

    def unsendable(self, job: JobT) -> str | None:
        """Why the job's call must not be sent any more (None: it may be)."""
        return None

    async def tick(self) -> None:
        await self.txmanager.hold_signer()  # another process signing: leave the jobs to it
        async with self.sessions() as session:
            jobs = await self.due(session, TICK_LIMIT)
        await each_on_its_own(self.name, jobs, self._advance, label=self.request_of)

    async def _settled(self, job: JobT, *, succeeded: bool, tx_hash: str | None) -> None:
        async with self.sessions() as session, session.begin():
            await self.settle(session, job, succeeded=succeeded, tx_hash=tx_hash)

    async def _advance(self, job: JobT) -> None:
        request_id = self.request_of(job)
        attempt = await self.txmanager.attempt(request_id, self.purpose)
        if isinstance(attempt, Mined):
            await self._settled(job, succeeded=attempt.succeeded, tx_hash=attempt.row.tx_hash)
            if not attempt.succeeded:
                log.error(f"{self.what} reverted", request_id=request_id)
            return
        if isinstance(attempt, InFlight):
            return  # sent, not mined yet
        reason = self.unsendable(job)
        if reason is not None:
            log.warning(f"{self.what} given up unsent", request_id=request_id, reason=reason)
            await self._settled(job, succeeded=False, tx_hash=None)
            return
        call = self.call(job)
        try:
            gas = await self.gas_for(call.to, call.data)
        except Reverted as revert:
            log.error(
                f"{self.what} refused by the chain",
                request_id=request_id,
                reason=revert.reason.message,
            )
            await self._settled(job, succeeded=False, tx_hash=None)
            return
        await self.send_estimated(
            call.to, call.data, gas, purpose=self.purpose, request_id=request_id
        )
