"""App-fee shares per recipient: recorded with the quote, settled with the request's outcome."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.status import RequestStatus
from crossfill.store.tables import AppFee, Deposit, Request

QUOTED, OWED, CLAIMING, PAID, VOID = "quoted", "owed", "claiming", "paid", "void"


async def follow_status(session: AsyncSession, request: Request, *, now: datetime) -> None:
    """Success makes the shares owed (or paid, when the user's own transaction paid them);
    a refund voids them."""
    values: dict[str, object]
    if request.status == RequestStatus.SUCCESS:
        same_chain = request.origin_chain_id == request.destination_chain_id
        values = {"state": PAID if same_chain else OWED, "actual_amount": AppFee.quoted_amount}
    elif request.status == RequestStatus.REFUND:
        values = {"state": VOID, "actual_amount": "0"}
    else:
        return
    await session.execute(
        update(AppFee)
        .where(AppFee.request_id == request.id, AppFee.state == QUOTED)
        .values(updated_at=now, **values)
    )


async def of_request(session: AsyncSession, request_id: str) -> list[AppFee]:
    return list(
        await session.scalars(
            select(AppFee).where(AppFee.request_id == request_id).order_by(AppFee.id)
        )
    )


@dataclass(frozen=True)
class Balance:
    chain_id: int
    currency: str
    state: str
    amount: int
    requests: int
    # The shares' USD value when they were quoted.
    quoted_usd_micros: int


async def balances(session: AsyncSession, recipient: str) -> list[Balance]:
    """What a recipient has earned, per chain, currency and state (owed, claiming, paid,
    quoted)."""
    rows = await session.execute(
        select(
            AppFee.chain_id,
            AppFee.currency,
            AppFee.state,
            AppFee.quoted_amount,
            AppFee.amount_usd_micros,
        ).where(AppFee.recipient == recipient.lower(), AppFee.state != VOID)
    )
    totals: dict[tuple[int, str, str], list[int]] = {}
    for chain_id, currency, state, amount, usd_micros in rows:
        entry = totals.setdefault((chain_id, currency, state), [0, 0, 0])
        entry[0] += int(amount)  # amounts are uint256 strings: summed in Python, not SQL
        entry[1] += 1
        entry[2] += usd_micros
    return [
        Balance(chain_id, currency, state, amount, count, usd_micros)
        for (chain_id, currency, state), (amount, count, usd_micros) in sorted(totals.items())
    ]


async def app_fee_shares(session: AsyncSession, deposit: Deposit) -> list[int]:
    """The app fees the deposit carried for its request, which stay in the Depository for
    their recipients (every share not voided, in the deposit's chain and currency)."""
    shares = await session.scalars(
        select(AppFee.quoted_amount).where(
            AppFee.request_id == deposit.request_id,
            AppFee.chain_id == deposit.chain_id,
            AppFee.currency == deposit.currency,
            AppFee.state != VOID,
        )
    )
    return [int(amount) for amount in shares]
