"""Nonce mappings (POST /authorize): (wallet, nonce) -> request id, stored once."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.nonce_mapping import NonceMapping as SignedMapping
from crossfill.store.tables import NonceMapping


def add(
    session: AsyncSession, mapping: SignedMapping, signature: str, *, now: datetime
) -> NonceMapping:
    """Stage the mapping; the (wallet, nonce) unique constraint refuses a second one at flush."""
    row = NonceMapping(
        wallet=mapping.wallet.lower(),
        nonce=str(mapping.nonce),
        request_id=mapping.request_id.lower(),
        wallet_chain_id=mapping.wallet_chain_id,
        depositor=mapping.depositor.lower(),
        signature_chain_id=mapping.signature_chain_id,
        signature=signature,
        created_at=now,
    )
    session.add(row)
    return row


async def of_wallet_nonce(session: AsyncSession, wallet: str, nonce: int) -> NonceMapping | None:
    return await session.scalar(
        select(NonceMapping).where(
            NonceMapping.wallet == wallet.lower(), NonceMapping.nonce == str(nonce)
        )
    )


async def of_request(session: AsyncSession, request_id: str) -> list[NonceMapping]:
    """The request's mappings, oldest first."""
    rows = await session.scalars(
        select(NonceMapping)
        .where(NonceMapping.request_id == request_id.lower())
        .order_by(NonceMapping.id)
    )
    return list(rows)
