"""The perps payer's journal (`perps_payments`), in the lifecycle of every payer's journal
(`store.payment_journal`): signed -> credited | refused | dead, with the ledger's hash and time
of the credit or the exchange's refusal. The caller owns the transaction."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.payment_journal import PaymentJournal, Stages
from crossfill.store.tables import PerpsPayment

PERPS_PAYMENTS = PaymentJournal(
    PerpsPayment,
    Stages(paid="credited", refused="refused", dead="dead"),
    outcome=("tx_hash", "ledger_time_ms", "error"),
)


async def highest_nonce(session: AsyncSession, *, signer: str) -> int:
    """The highest nonce journalled for `signer` (0 for none): the next must exceed it."""
    found = await session.scalar(
        select(func.max(PerpsPayment.nonce)).where(PerpsPayment.signer == signer)
    )
    return int(found or 0)
