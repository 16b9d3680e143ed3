"""Rows the solver settles for a request with a transaction of its own, one per request on a
chain: a permit deposit it sends (`permit_deposits`), a sponsor payment it pulls
(`sponsor_payments`). Each waits in one state, oldest first, and is settled out of it once,
as succeeded or failed. Never commits: the caller owns the transaction."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import PermitDeposit, SponsorPayment

Settled = TypeVar("Settled", PermitDeposit, SponsorPayment)


class OnSuccess(Protocol):
    def __call__(
        self, session: AsyncSession, request_id: str, *, now: datetime
    ) -> Awaitable[None]: ...


@dataclass(frozen=True)
class SolverSettled(Generic[Settled]):
    """The rows of `table`: waiting in `waiting_in`, then `succeeded` or `failed`;
    `on_success` records what else a success means, in the same transaction."""

    table: type[Settled]
    waiting_in: str
    succeeded: str
    failed: str
    on_success: OnSuccess | None = None

    async def waiting(self, session: AsyncSession, chain_id: int, *, limit: int) -> list[Settled]:
        """Up to `limit` of the chain's waiting rows, the longest unchanged first."""
        table = self.table
        return list(
            await session.scalars(
                select(table)
                .where(table.chain_id == chain_id, table.state == self.waiting_in)
                .order_by(table.updated_at)
                .limit(limit)
            )
        )

    async def settle(
        self,
        session: AsyncSession,
        request_id: str,
        *,
        succeeded: bool,
        tx_hash: str | None,
        now: datetime,
    ) -> None:
        """The request's row settled with the transaction that settled it (if any), unless it
        is no longer waiting."""
        table = self.table
        await session.execute(
            update(table)
            .where(table.request_id == request_id, table.state == self.waiting_in)
            .values(
                state=self.succeeded if succeeded else self.failed, tx_hash=tx_hash, updated_at=now
            )
        )
        if succeeded and self.on_success is not None:
            await self.on_success(session, request_id, now=now)
