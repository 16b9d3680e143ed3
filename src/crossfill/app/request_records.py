"""Requests as their records show them, for every reader: `GET /requests/v3` and `/v2`,
`crossfill requests`, and the explorer.

A page of stored requests becomes their record facts (`facts_of`: with their transactions,
app fees and gas sponsors, read in three queries for the whole page), shaped with what the
deployment says (`RecordShaping`: the solver, and every configured currency). One request in
full (`detail`) adds its v3 record, the status changes it went through and its deposit
address's children.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.config import Deployment
from crossfill.domain.record_facts import CurrencyObjects, RecordFacts, SolverFacts
from crossfill.domain.request_record import v3_record
from crossfill.domain.request_timeline import StatusChange
from crossfill.kinds.evm.config import evm_chains
from crossfill.quoting.response import currency_wire
from crossfill.store import listing, request_history, requests
from crossfill.store.tables import Request


@dataclass(frozen=True)
class RecordShaping:
    """What a record is shaped with beyond its stored rows: the deployment's solver and
    chains, and every configured currency's wire object (for an amount moved in a currency
    the quote did not name)."""

    deployment: Deployment
    currencies: CurrencyObjects

    @classmethod
    def of(cls, deployment: Deployment) -> RecordShaping:
        currencies: CurrencyObjects = {
            (int(chain.id), currency.address.lower()): currency_wire(chain, currency)
            for chain in evm_chains(deployment)
            for currency in chain.currencies
        }
        return cls(deployment, currencies)

    def solver(self, row: Request) -> SolverFacts:
        return SolverFacts(
            address=self.deployment.solver.address,
            protocol_chain_id=self.deployment.protocol_name(row.destination_chain_id),
            chain_id=row.destination_chain_id,
        )


def _no_referrer(row: Request) -> str | None:
    return None


async def facts_of(
    session: AsyncSession,
    rows: Sequence[Request],
    shaping: RecordShaping,
    *,
    referrer: Callable[[Request], str | None] = _no_referrer,
) -> list[RecordFacts]:
    """Each row's record facts, in order (`referrer`: what a row shows as its referrer to
    this reader; none by default, as the v3 listing shows it without authenticated data)."""
    ids = [row.id for row in rows]
    transactions = await listing.transactions_by_request(session, ids)
    app_fees = await listing.app_fees_by_request(session, ids)
    sponsors = await listing.gas_sponsors_by_request(session, ids)
    return [
        listing.record_facts(
            row,
            transactions[row.id],
            app_fees[row.id],
            shaping.solver(row),
            referrer=referrer(row),
            currencies=shaping.currencies,
            gas_sponsor=sponsors.get(row.id),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class RequestDetail:
    """One request in full: its row, facts and v3 record, the status changes it went through
    (oldest first), and the requests its deposit address's later transfers made."""

    row: Request
    facts: RecordFacts
    record: dict[str, Any]
    changes: Sequence[StatusChange]
    children: Sequence[Request]


async def detail(
    session: AsyncSession, request_id: str, shaping: RecordShaping
) -> RequestDetail | None:
    """The request `request_id` (lower-case 0x and 32 bytes) in full; None if there is none."""
    row = await requests.get(session, request_id)
    if row is None:
        return None
    (facts,) = await facts_of(session, [row], shaping)
    return RequestDetail(
        row=row,
        facts=facts,
        record=v3_record(facts),
        changes=await request_history.status_changes(session, row.id),
        children=await request_history.children(session, row.id),
    )
