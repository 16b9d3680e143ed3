"""Repository of operator chain toggles. Never commits: the caller owns the transaction."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import ChainControl


async def set_disabled(
    session: AsyncSession, chain_id: int, *, disabled: bool, reason: str | None = None
) -> None:
    control = await session.get(ChainControl, chain_id)
    now = datetime.now(UTC)
    if control is None:
        session.add(
            ChainControl(chain_id=chain_id, disabled=disabled, reason=reason, updated_at=now)
        )
    else:
        control.disabled = disabled
        control.reason = reason
        control.updated_at = now
    await session.flush()


async def disabled_overrides(session: AsyncSession) -> dict[int, bool]:
    """Chain id → operator's disabled flag, for chains with an override."""
    rows = await session.execute(select(ChainControl.chain_id, ChainControl.disabled))
    return {row.chain_id: row.disabled for row in rows}


async def all_controls(session: AsyncSession) -> list[ChainControl]:
    rows = await session.scalars(select(ChainControl).order_by(ChainControl.chain_id))
    return list(rows)
