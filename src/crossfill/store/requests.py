"""Repository of requests and their transactions. Never commits: the caller owns the transaction."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.status import RequestStatus
from crossfill.quoting.engine import BridgeQuote
from crossfill.store.tables import Request, RequestTransaction


def request_from_quote(
    quote: BridgeQuote, wire: dict[str, Any], *, referrer: str | None, api_key_id: int | None
) -> Request:
    return Request(
        id=quote.request_id,
        order_id=quote.order_id,
        status=RequestStatus.WAITING,
        origin_chain_id=quote.origin.id,
        destination_chain_id=quote.destination.id,
        user_address=quote.user,
        recipient=quote.recipient,
        refund_to=quote.refund_to,
        origin_currency=quote.currency_in.address.lower(),
        destination_currency=quote.currency_out.address.lower(),
        trade_type=quote.trade_type,
        amount_in=str(quote.amounts.amount_in),
        amount_out=str(quote.amounts.amount_out),
        minimum_amount_out=str(quote.amounts.amount_out),
        amount_in_usd_micros=quote.usd_micros(quote.currency_in, quote.amounts.amount_in),
        explicit_deposit=quote.explicit_deposit,
        quote=wire,
        referrer=referrer,
        api_key_id=api_key_id,
        expires_at=quote.expires_at,
        created_at=quote.created_at,
        updated_at=quote.created_at,
    )


async def get(session: AsyncSession, request_id: str) -> Request | None:
    return await session.get(Request, request_id)


async def by_order_id(session: AsyncSession, order_id: str) -> Request | None:
    return await session.scalar(select(Request).where(Request.order_id == order_id))


async def transactions_of(session: AsyncSession, request_id: str) -> list[RequestTransaction]:
    rows = await session.scalars(
        select(RequestTransaction)
        .where(RequestTransaction.request_id == request_id)
        .order_by(RequestTransaction.id)
    )
    return list(rows)


def as_utc_ms(moment: datetime) -> int:
    """Unix milliseconds; SQLite hands stored times back without their (UTC) zone."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)
