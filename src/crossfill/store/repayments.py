"""Repository of repayments: the deposits owed to the solver, and each one's payout to it out of
the Depository (`tables.Repayment`). The caller owns the transaction."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.deposit_log import DEPOSITORY
from crossfill.domain.repayments import SENDING
from crossfill.domain.status import RequestStatus
from crossfill.store.db import as_utc
from crossfill.store.deposits import CONFIRMED, WHOLE
from crossfill.store.tables import Deposit, Repayment, Request, RequestTransaction

FILL = "fill"


@dataclass(frozen=True)
class MinedFill:
    """A fill transaction of a request, as recorded mined and successful."""

    chain_id: int
    tx_hash: str
    block_number: int | None
    recorded_at: datetime


@dataclass(frozen=True)
class OwedDeposit:
    """A deposit that paid for a request now filled, not yet repaid nor refunded: owed to the
    solver once one of its `fills` is final."""

    deposit: Deposit
    request_id: str
    destination_chain_id: int
    fills: tuple[MinedFill, ...]
    # The external solver that won the order (lower case), if one did: the fill may be its
    # (repaid to whoever the Filler logged as the filler), else the operator's.
    exclusive_solver: str | None = None
    order_id: str = ""


# Whole accepted deposits in the Depository, confirmed, of requests filled cross-chain, with
# neither a refund nor a repayment started (with `Request` joined).
OWED = (
    Deposit.state == CONFIRMED,
    Deposit.part == WHOLE,
    Deposit.outcome == DepositVerdict.ACCEPTED,
    Deposit.paid_to == DEPOSITORY,
    Deposit.refund_status.is_(None),
    Request.status == RequestStatus.SUCCESS,
    Request.destination_chain_id != Deposit.chain_id,
    ~exists().where(Repayment.deposit_id == Deposit.id),
)


async def owed_on(
    session: AsyncSession, chain_id: int, *, destinations: Collection[int], limit: int
) -> list[OwedDeposit]:
    """The chain's deposits owed to the solver for orders filled on one of `destinations`
    (their fills not yet known final), oldest first, with their requests' successful fills.
    An order filled on a chain not among them is not listed: it would hold back the rest."""
    rows = (
        await session.execute(
            select(
                Deposit, Request.destination_chain_id, Request.exclusive_solver, Request.order_id
            )
            .join(Request, Request.id == Deposit.request_id)
            .where(
                Deposit.chain_id == chain_id,
                Request.destination_chain_id.in_(destinations),
                *OWED,
            )
            .order_by(Deposit.id)
            .limit(limit)
        )
    ).all()
    request_ids = [deposit.request_id for deposit, *_ in rows if deposit.request_id is not None]
    fills: dict[str, list[MinedFill]] = {}
    for tx in await session.scalars(
        select(RequestTransaction).where(
            RequestTransaction.request_id.in_(request_ids),
            RequestTransaction.kind == FILL,
            RequestTransaction.status == "success",
        )
    ):
        fills.setdefault(tx.request_id, []).append(
            MinedFill(tx.chain_id, tx.tx_hash, tx.block_number, as_utc(tx.created_at))
        )
    return [
        OwedDeposit(
            deposit,
            deposit.request_id,
            destination,
            tuple(fills.get(deposit.request_id, ())),
            exclusive_solver,
            order_id,
        )
        for deposit, destination, exclusive_solver, order_id in rows
        if deposit.request_id is not None
    ]


async def still_owed(session: AsyncSession, deposit_id: int) -> bool:
    """Whether the deposit is still owed to the solver and unpaid, read afresh (locked, on
    PostgreSQL): checked in the transaction that starts its repayment."""
    found = await session.scalar(
        select(Deposit.id)
        .join(Request, Request.id == Deposit.request_id)
        .where(Deposit.id == deposit_id, *OWED)
        .with_for_update(of=Deposit)
    )
    return found is not None


async def sending_batches(session: AsyncSession, chain_id: int) -> list[list[Repayment]]:
    """The chain's repayments on their way, by batch (oldest first)."""
    rows = await session.scalars(
        select(Repayment)
        .where(Repayment.chain_id == chain_id, Repayment.state == SENDING)
        .order_by(Repayment.id)
    )
    batches: dict[str, list[Repayment]] = {}
    for row in rows:
        batches.setdefault(row.batch, []).append(row)
    return list(batches.values())
