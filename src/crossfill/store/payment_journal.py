"""The journal of a payer that pays each payment once, crash-safe: one lifecycle, over a table
per kind (the SVM payer's `svm_payments`, the perps payer's `perps_payments`).

A payment (`purpose`, `payment_key`: a fill or refund of one request) has attempts 1, 2, ...
Each attempt is journalled in flight (`signed`) and committed before it is sent. It then
settles once, and only from in flight: paid, refused, or dead (provably never to be paid). Only
the newest attempt counts. The next is journalled in the transaction that settles its
predecessor dead, and the unique key (chain, purpose, key, attempt) refuses a second attempt of
one number, so two processes cannot both journal it and at most one attempt is ever paid.

Each table keeps the stages in its own words (`Stages`). The caller owns the transaction.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Generic, TypeVar

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import PaymentAttemptColumns

IN_FLIGHT = "signed"

Attempt = TypeVar("Attempt", bound=PaymentAttemptColumns)


class Stage(Enum):
    """Where a settled attempt ended."""

    PAID = "paid"
    REFUSED = "refused"
    # It can never be paid: the payment's next attempt may be journalled.
    DEAD = "dead"


@dataclass(frozen=True)
class Stages:
    """A journal's words for the settled stages, as its table stores them."""

    paid: str
    refused: str
    dead: str

    def word(self, stage: Stage) -> str:
        return {Stage.PAID: self.paid, Stage.REFUSED: self.refused, Stage.DEAD: self.dead}[stage]


class PaymentJournal(Generic[Attempt]):
    """The lifecycle of the attempts kept in `table`; `outcome` names its columns that record
    how an attempt settled (each written when it settles, None unless given)."""

    def __init__(self, table: type[Attempt], stages: Stages, *, outcome: tuple[str, ...]) -> None:
        self.table = table
        self.stages = stages
        self.outcome = outcome

    def stage_of(self, attempt: Attempt) -> Stage | None:
        """Where the attempt settled; None while it is in flight."""
        return next((stage for stage in Stage if self.stages.word(stage) == attempt.status), None)

    async def latest(
        self, session: AsyncSession, *, chain_id: int, purpose: str, payment_key: str
    ) -> Attempt | None:
        """The payment's newest attempt (the only one that may still be paid, or was)."""
        table = self.table
        found: Attempt | None = await session.scalar(
            select(table)
            .where(
                table.chain_id == chain_id,
                table.purpose == purpose,
                table.payment_key == payment_key,
            )
            .order_by(table.attempt.desc())
            .limit(1)
        )
        return found

    async def journalled(
        self, session: AsyncSession, *, chain_id: int, purpose: str, keys: Collection[str]
    ) -> set[str]:
        """Which of the payments `keys` have an attempt journalled (one query)."""
        if not keys:
            return set()
        table = self.table
        found = await session.scalars(
            select(table.payment_key)
            .where(
                table.chain_id == chain_id,
                table.purpose == purpose,
                table.payment_key.in_(keys),
            )
            .distinct()
        )
        return set(found)

    async def journal(
        self, session: AsyncSession, attempt: Attempt, *, replacing: Attempt | None, now: datetime
    ) -> bool:
        """Journal `attempt`, in flight. With `replacing` (the attempt before it, provably
        dead), that one is settled dead in the same transaction; False, journalling nothing,
        when it was no longer in flight (another process settled it first). A second attempt
        of the same number fails the commit (`IntegrityError`)."""
        if replacing is not None and not await self.settle(
            session, replacing.id, Stage.DEAD, now=now
        ):
            return False
        session.add(attempt)
        return True

    async def settle(
        self,
        session: AsyncSession,
        attempt_id: int,
        stage: Stage,
        *,
        now: datetime,
        **outcome: object,
    ) -> bool:
        """Move an in-flight attempt to `stage`, recording its `outcome` (the table's outcome
        columns); False if it was not in flight (another process settled it first)."""
        unknown = set(outcome) - set(self.outcome)
        assert not unknown, f"not an outcome column of {self.table.__name__}: {unknown}"
        recorded = {column: outcome.get(column) for column in self.outcome}
        table = self.table
        result = await session.execute(
            update(table)
            .where(table.id == attempt_id, table.status == IN_FLIGHT)
            .values(status=self.stages.word(stage), **recorded, updated_at=now)
        )
        return bool(getattr(result, "rowcount", 0) == 1)

    async def in_flight(self, session: AsyncSession, *, chain_id: int) -> int:
        """How many of the chain's attempts are in flight (sent, not yet settled)."""
        table = self.table
        found = await session.scalar(
            select(func.count())
            .select_from(table)
            .where(table.chain_id == chain_id, table.status == IN_FLIGHT)
        )
        return int(found or 0)
