"""The journal of signed perps-exchange actions (`exchange_actions`). The caller owns the
transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import ExchangeAction

SIGNED = "signed"  # journalled; maybe posted, maybe taken
DONE = "done"  # the exchange's ledger shows it
DEAD = "dead"  # its nonce can no longer be taken and the ledger does not show it


async def latest(
    session: AsyncSession, *, chain_id: int, purpose: str, action_key: str
) -> ExchangeAction | None:
    """The action's newest attempt (the only one that may still land, or the one that did)."""
    found: ExchangeAction | None = await session.scalar(
        select(ExchangeAction)
        .where(
            ExchangeAction.chain_id == chain_id,
            ExchangeAction.purpose == purpose,
            ExchangeAction.action_key == action_key,
        )
        .order_by(ExchangeAction.attempt.desc())
        .limit(1)
    )
    return found


def record_signed(session: AsyncSession, action: ExchangeAction) -> None:
    """Journal a signed attempt (the unique keys refuse a second attempt of the same number
    and a second action under one signer's nonce)."""
    session.add(action)


async def settle(
    session: AsyncSession,
    action_id: int,
    *,
    status: str,
    now: datetime,
    ledger_hash: str | None = None,
) -> bool:
    """Move a signed attempt to done or dead; False if it was not signed any more (another
    process settled it first)."""
    result = await session.execute(
        update(ExchangeAction)
        .where(ExchangeAction.id == action_id, ExchangeAction.status == SIGNED)
        .values(status=status, ledger_hash=ledger_hash, updated_at=now)
    )
    return bool(getattr(result, "rowcount", 0) == 1)


async def note_error(session: AsyncSession, action_id: int, error: str, *, now: datetime) -> None:
    """What the exchange last answered to a post of the attempt (kept for the operator)."""
    await session.execute(
        update(ExchangeAction)
        .where(ExchangeAction.id == action_id)
        .values(last_error=error[:500], updated_at=now)
    )
