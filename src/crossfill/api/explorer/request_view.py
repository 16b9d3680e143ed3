"""One request as its explorer page shows it: who and what, its timeline with each
transaction linked to its chain's block explorer, its fees quoted beside actual, why it failed
or was not refunded, and its deposit address with the requests later transfers to it made."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from crossfill.api.explorer.links import Chains
from crossfill.api.explorer.list_view import Amount, RowSummary, summaries
from crossfill.app.request_records import RequestDetail
from crossfill.domain.reason_words import Reason, reasons
from crossfill.domain.request_fees import Fees, fees_of
from crossfill.domain.request_timeline import timeline
from crossfill.domain.status import TERMINAL
from crossfill.store.db import as_utc


@dataclass(frozen=True)
class Linked:
    """A hash or address, and where its chain's block explorer shows it (None: nowhere)."""

    text: str
    url: str | None


@dataclass(frozen=True)
class StepView:
    name: str
    at: datetime | None
    since_previous: timedelta | None
    chain: str | None
    transaction: Linked | None
    block: int | None


@dataclass(frozen=True)
class Party:
    role: str  # user, recipient, refund to
    address: Linked


@dataclass(frozen=True)
class DepositAddressView:
    address: Linked
    type: str
    recovery_address: str | None
    children: Sequence[RowSummary]


@dataclass(frozen=True)
class RequestView:
    request_id: str
    status: str
    final: bool  # no status change is coming
    order_id: str
    request_type: str
    origin: str
    destination: str
    amount_in: Amount
    amount_out: Amount
    parties: Sequence[Party]
    steps: Sequence[StepView]
    fees: Fees
    reasons: Sequence[Reason]
    deposit_address: DepositAddressView | None
    parent_request_id: str | None
    created_at: datetime
    updated_at: datetime


def _steps(found: RequestDetail, chains: Chains) -> list[StepView]:
    shown = []
    for step in timeline(found.facts, found.changes):
        transaction = chain = None
        if step.chain_id is not None and step.tx_hash is not None:
            chain = chains.name(step.chain_id)
            url = chains.transaction_url(step.chain_id, step.tx_hash)
            transaction = Linked(step.tx_hash, url)
        shown.append(
            StepView(step.name, step.at, step.since_previous, chain, transaction, step.block)
        )
    return shown


def _deposit_address(found: RequestDetail, chains: Chains) -> DepositAddressView | None:
    row = found.row
    if row.deposit_address is None:
        return None
    return DepositAddressView(
        address=Linked(
            row.deposit_address, chains.address_url(row.origin_chain_id, row.deposit_address)
        ),
        type=row.deposit_address_type or "",
        recovery_address=row.recovery_address,
        children=summaries(found.children, chains),
    )


def request_view(found: RequestDetail, chains: Chains) -> RequestView:
    row = found.row
    (summary,) = summaries([row], chains)
    origin, destination = row.origin_chain_id, row.destination_chain_id
    parties = [
        Party("user", Linked(row.user_address, chains.address_url(origin, row.user_address))),
        Party("recipient", Linked(row.recipient, chains.address_url(destination, row.recipient))),
        Party("refund to", Linked(row.refund_to, chains.address_url(origin, row.refund_to))),
    ]
    return RequestView(
        request_id=row.id,
        status=row.status,
        final=row.status in TERMINAL,
        order_id=row.order_id,
        request_type=row.request_type,
        origin=summary.origin,
        destination=summary.destination,
        amount_in=summary.amount_in,
        amount_out=summary.amount_out,
        parties=parties,
        steps=_steps(found, chains),
        fees=fees_of(found.record),
        reasons=reasons(row.fail_reason, row.refund_fail_reason),
        deposit_address=_deposit_address(found, chains),
        parent_request_id=row.parent_request_id,
        created_at=as_utc(row.created_at),
        updated_at=as_utc(row.updated_at),
    )
