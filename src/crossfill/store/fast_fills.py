"""Fast fills a key's sponsor wallet is still answerable for: requests filled on a deposit seen
but not yet confirmed. The caller owns the transaction."""

from __future__ import annotations

from sqlalchemy import exists, func, literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.enums import features_mask
from crossfill.store import deposits
from crossfill.store.tables import ApiKey, Deposit, Request

FAST_FILL = features_mask(["fast_fill"])


async def outstanding_usd_micros(session: AsyncSession, sponsor_wallet: str) -> int:
    """The quoted value of the fast fills of keys sponsored by `sponsor_wallet` whose deposit
    has not been confirmed and accepted yet."""
    settled = exists().where(
        Deposit.request_id == Request.id,
        Deposit.state == deposits.CONFIRMED,
        Deposit.outcome == DepositVerdict.ACCEPTED,
    )
    total = await session.scalar(
        select(func.coalesce(func.sum(Request.amount_in_usd_micros), 0))
        .join(ApiKey, ApiKey.id == Request.api_key_id)
        .where(
            ApiKey.sponsor_address == sponsor_wallet.lower(),
            Request.features_mask.op("&")(literal(FAST_FILL)) == FAST_FILL,
            ~settled,
        )
    )
    return int(total or 0)


async def seen_deposit(session: AsyncSession, request: Request) -> Deposit | None:
    """The request's deposit as the indexer saw it on the origin chain, not confirmed yet."""
    return await session.scalar(
        select(Deposit)
        .where(
            Deposit.order_id == request.order_id,
            Deposit.chain_id == request.origin_chain_id,
            Deposit.state == deposits.SEEN,
        )
        .order_by(Deposit.id)
        .limit(1)
    )
