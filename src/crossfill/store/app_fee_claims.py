"""App-fee claims: filed with the shares they pay (owed → claiming), paid once mined.

The caller owns the transaction: filing a claim and moving its shares is one unit, so a share
is never in two claims and a filed claim never loses its shares.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.app_fee_claim import ClaimTerms
from crossfill.store import books, commit_signals
from crossfill.store.app_fees import CLAIMING, OWED, PAID
from crossfill.store.tables import AppFee, AppFeeClaim

# A claim is `claiming` (filed), `submitted` (its payout sent) or `paid`; its shares are
# `claiming` until it is paid.
SUBMITTED = "submitted"
UNSETTLED = (CLAIMING, SUBMITTED)


async def owed_shares(
    session: AsyncSession,
    wallet: str,
    chain_id: int,
    currency: str,
    *,
    through_fee_id: int | None = None,
) -> list[AppFee]:
    """The wallet's owed shares on a chain in a currency, oldest first (up to an id)."""
    statement = select(AppFee).where(
        AppFee.recipient == wallet.lower(),
        AppFee.chain_id == chain_id,
        AppFee.currency == currency.lower(),
        AppFee.state == OWED,
    )
    if through_fee_id is not None:
        statement = statement.where(AppFee.id <= through_fee_id)
    return list(await session.scalars(statement.order_by(AppFee.id)))


def share_amount(share: AppFee) -> int:
    return int(share.actual_amount or share.quoted_amount)


async def file(
    session: AsyncSession,
    terms: ClaimTerms,
    claim_id: str,
    shares: list[AppFee],
    *,
    now: datetime,
) -> AppFeeClaim | None:
    """Record the claim and move `shares` from owed to claiming under it; None (and the
    caller rolls back) when another claim took one of them meanwhile."""
    claim = AppFeeClaim(
        claim_id=claim_id,
        wallet=terms.wallet.lower(),
        recipient=terms.recipient.lower(),
        chain_id=terms.chain_id,
        currency=terms.currency.lower(),
        amount=str(terms.amount),
        state=CLAIMING,
        created_at=now,
        updated_at=now,
    )
    session.add(claim)
    commit_signals.APP_FEE_CLAIMS.mark(session.sync_session)  # the payer, once committed
    await session.flush()
    moved = await session.execute(
        update(AppFee)
        .where(AppFee.id.in_([share.id for share in shares]), AppFee.state == OWED)
        .values(state=CLAIMING, claim_id=claim.id, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    return claim if moved.rowcount == len(shares) else None  # type: ignore[attr-defined]


async def by_claim_id(session: AsyncSession, claim_id: str) -> AppFeeClaim | None:
    return await session.scalar(select(AppFeeClaim).where(AppFeeClaim.claim_id == claim_id))


async def unsettled_on(session: AsyncSession, chain_id: int, *, limit: int) -> list[AppFeeClaim]:
    """Claims on a chain not yet paid, oldest first."""
    return list(
        await session.scalars(
            select(AppFeeClaim)
            .where(AppFeeClaim.chain_id == chain_id, AppFeeClaim.state.in_(UNSETTLED))
            .order_by(AppFeeClaim.id)
            .limit(limit)
        )
    )


async def mark_submitted(
    session: AsyncSession, claim_row_id: int, tx_hash: str | None, *, now: datetime
) -> None:
    claim = await session.get(AppFeeClaim, claim_row_id)
    assert claim is not None
    if claim.state in UNSETTLED and tx_hash is not None:
        claim.state, claim.tx_hash, claim.updated_at = SUBMITTED, tx_hash, now


async def mark_paid(
    session: AsyncSession, claim_row_id: int, tx_hash: str | None, *, now: datetime
) -> None:
    """The payout is mined (`tx_hash`; None when it was someone else's transaction that
    executed our signed payout): the claim and every share it carries are paid."""
    claim = await session.get(AppFeeClaim, claim_row_id)
    assert claim is not None
    claim.state, claim.updated_at = PAID, now
    claim.tx_hash = tx_hash or claim.tx_hash
    await books.app_fees_claimed(session, claim, now=now)
    await session.execute(
        update(AppFee)
        .where(AppFee.claim_id == claim_row_id, AppFee.state == CLAIMING)
        .values(state=PAID, updated_at=now)
        .execution_options(synchronize_session=False)
    )
