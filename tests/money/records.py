"""What the service's tables say, read once per check: which part of a deposit paid which
request, where it says it refunded it or why it kept it, where it repaid it to the solver,
and which of its payments off the EVM chains are fills and which refunds (the SVM payer's and
the perps payer's journals)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlalchemy import select

from crossfill.store.tables import (
    AddressTransfer,
    AppFeeClaim,
    Deposit,
    PerpsPayment,
    Repayment,
    Request,
    SvmPayment,
)
from tests.support.database import sessions_of

# A deposit as its chain names it: (chain id, transaction, its index there).
DepositKey = tuple[int, str, int]


@dataclass(frozen=True)
class Records:
    parts: dict[DepositKey, list[Deposit]]
    requests: dict[str, Request]
    requests_by_order: dict[str, Request]
    claim_payouts: set[str]
    address_transfers: list[AddressTransfer]
    # Every attempt the SVM payer signed, by its signature.
    svm_payments: dict[str, SvmPayment]
    # Every action the perps payer signed, by (signer, nonce): what its ledger entry shows.
    perps_payments: dict[tuple[str, int], PerpsPayment]
    # Every deposit's repayment to the solver, by the deposit's row id.
    repayments: dict[int, Repayment]

    def named_by(self, payout: str) -> str:
        """Which recorded deposit names the payout, though not as its refund (for the report)."""
        named = [
            f"deposit {part.id} ({part.tx_hash}:{part.log_index}, refund {part.refund_status})"
            for parts in self.parts.values()
            for part in parts
            if part.refund_tx_hash == payout
        ]
        return f"; named by {named}" if named else ""


async def read_records(database_url: str) -> Records:
    async with sessions_of(database_url) as sessions, sessions() as session:
        parts: dict[DepositKey, list[Deposit]] = defaultdict(list)
        for row in await session.scalars(select(Deposit).order_by(Deposit.part)):
            if row.state != "reorged":
                parts[(row.chain_id, row.tx_hash, row.log_index)].append(row)
        requests = {row.id: row for row in await session.scalars(select(Request))}
        claims = {row.tx_hash for row in await session.scalars(select(AppFeeClaim)) if row.tx_hash}
        transfers = list(await session.scalars(select(AddressTransfer)))
        svm = {row.signature: row for row in await session.scalars(select(SvmPayment))}
        perps = {
            (row.signer.lower(), row.nonce): row
            for row in await session.scalars(select(PerpsPayment))
        }
        repaid = {row.deposit_id: row for row in await session.scalars(select(Repayment))}
    by_order = {request.order_id: request for request in requests.values()}
    return Records(dict(parts), requests, by_order, claims, transfers, svm, perps, repaid)
