"""What the solver's inventory is committed to and owed, read from the requests, deposits and
repayments (`domain.inventory` for the model). The caller owns the session."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.inventory import Amounts, fill_outputs
from crossfill.domain.repayments import SENDING
from crossfill.domain.status import RequestStatus
from crossfill.store import app_fees
from crossfill.store.repayments import FILL, OWED
from crossfill.store.tables import (
    AppFee,
    Deposit,
    Repayment,
    Request,
    RequestTransaction,
    SentTransaction,
)
from crossfill.types import NATIVE_EVM_ADDRESS

# A request whose deposit is seen or on its way and whose fill has not landed: its output is
# committed. `depositing`: a gasless or permit deposit the service is sending; `pending`: the
# deposit accepted, the fill not sent; `submitted`: the fill sent, not yet mined.
COMMITTING = (RequestStatus.DEPOSITING, RequestStatus.PENDING, RequestStatus.SUBMITTED)
# Requests whose fill plans `in_flight` reads in one query.
OUTPUTS_READ_TOGETHER = 500


def _outputs(plan: dict[str, Any] | None, destination_currency: str, amount_out: str) -> Amounts:
    if plan is None:
        # Paid off the EVM chains, or quoted before fill plans were stored: the row's own
        # output, its currency as the row keeps it (the chain's kind keys it).
        return {destination_currency: int(amount_out)}
    return fill_outputs(
        native=NATIVE_EVM_ADDRESS,
        spends_currency=str(plan["spendsCurrency"]),
        spends_amount=int(plan["spendsAmount"]),
        value=int(plan["value"]),
    )


async def in_flight(
    session: AsyncSession, chain_ids: list[int], known: Mapping[str, Amounts] | None = None
) -> dict[int, dict[str, Amounts]]:
    """Per destination chain of `chain_ids`, its requests in flight and the outputs each
    commits (a query over the status index, reading only the columns it needs). `known`: the
    outputs of requests read before, by id (they do not change): only the others' plans are
    read, in a second query."""
    known = known or {}
    found = await session.execute(
        select(Request.id, Request.destination_chain_id).where(
            Request.status.in_(COMMITTING), Request.destination_chain_id.in_(chain_ids)
        )
    )
    ids: dict[str, int] = dict(found.all())
    new = [request_id for request_id in ids if request_id not in known]
    outputs = {request_id: known[request_id] for request_id in ids.keys() - set(new)}
    for start in range(0, len(new), OUTPUTS_READ_TOGETHER):
        rows = await session.execute(
            select(
                Request.id, Request.fill_plan, Request.destination_currency, Request.amount_out
            ).where(Request.id.in_(new[start : start + OUTPUTS_READ_TOGETHER]))
        )
        for request_id, plan, currency, amount_out in rows:
            outputs[request_id] = _outputs(plan, currency, amount_out)
    by_chain: dict[int, dict[str, Amounts]] = {chain_id: {} for chain_id in chain_ids}
    for request_id, chain_id in ids.items():
        by_chain[chain_id][request_id] = outputs[request_id]
    return by_chain


@dataclass(frozen=True)
class Queued:
    """A request deposited (or being deposited) to a chain, not yet filled: its output."""

    request_id: str
    status: RequestStatus
    currency: str  # as the row keeps it
    amount_out: int


async def queue(session: AsyncSession, chain_id: int) -> list[Queued]:
    """The requests in flight to `chain_id`, in the order they reached their status (for a
    `pending` request: its deposit accepted; leases leave it untouched)."""
    rows = await session.execute(
        select(Request.id, Request.status, Request.destination_currency, Request.amount_out)
        .where(Request.status.in_(COMMITTING), Request.destination_chain_id == chain_id)
        .order_by(Request.updated_at, Request.id)
    )
    return [
        Queued(request_id, RequestStatus(status), currency, int(amount_out))
        for request_id, status, currency, amount_out in rows
    ]


async def fill_blocks(session: AsyncSession, request_ids: Collection[str]) -> dict[str, int]:
    """The block that mined each request's successful fill, for those of `request_ids` that
    have one (by the request id index)."""
    if not request_ids:
        return {}
    rows = await session.execute(
        select(RequestTransaction.request_id, RequestTransaction.block_number).where(
            RequestTransaction.request_id.in_(request_ids),
            RequestTransaction.kind == FILL,
            RequestTransaction.status == "success",
        )
    )
    return {request_id: block for request_id, block in rows if block is not None}


# A filled order the solver key filled: no external solver won it, or its own journal's fill
# of it was mined (the fallback's).
_OURS = Request.exclusive_solver.is_(None) | exists().where(
    SentTransaction.request_id == Request.id,
    SentTransaction.purpose == FILL,
    SentTransaction.status == "mined",
)


async def owed(session: AsyncSession) -> dict[int, Amounts]:
    """Per origin chain, what the solver is owed and not yet paid: the deposits of its filled
    orders whose repayment has not started (less the app fees they carried, which stay in
    the Depository for their recipients), and the repayments on their way. An order an
    external solver won counts only when the solver key's own journalled fill filled it (the
    fallback): the winner's own fill is repaid to the winner."""
    by_chain: dict[int, Amounts] = {}

    def add(chain_id: int, currency: str, amount: int) -> None:
        amounts = by_chain.setdefault(chain_id, {})
        amounts[currency.lower()] = amounts.get(currency.lower(), 0) + amount

    waiting = (
        await session.execute(
            select(Deposit.chain_id, Deposit.currency, Deposit.amount, Deposit.request_id)
            .join(Request, Request.id == Deposit.request_id)
            .where(*OWED, _OURS)
        )
    ).all()
    for chain_id, currency, amount, _request_id in waiting:
        add(chain_id, currency, int(amount))
    fees = await session.execute(
        select(AppFee.chain_id, AppFee.currency, AppFee.quoted_amount).where(
            AppFee.request_id.in_({row.request_id for row in waiting}),
            AppFee.state != app_fees.VOID,
        )
    )
    owing = {(row.chain_id, row.currency.lower()) for row in waiting}
    for chain_id, currency, amount in fees:
        if (chain_id, currency.lower()) in owing:
            add(chain_id, currency, -int(amount))
    sending = await session.execute(
        select(Repayment.chain_id, Repayment.currency, Repayment.amount)
        .join(Request, Request.id == Repayment.request_id)
        .where(
            Repayment.state == SENDING,
            Request.exclusive_solver.is_(None) | (Repayment.recipient != Request.exclusive_solver),
        )
    )
    for chain_id, currency, amount in sending:
        add(chain_id, currency, int(amount))
    return by_chain
