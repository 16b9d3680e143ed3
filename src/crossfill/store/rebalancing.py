"""Repository of the rebalancer's moves (`tables.RebalanceMove`, `domain.rebalancing`): those
under way, what is in transit toward each chain, the moves refused lately, and the books'
rebalance out posted as a move's deposit is recorded mined. The caller owns the session."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.inventory import Amounts
from crossfill.domain.rebalancing import FAILED, SENT, UNDER_WAY
from crossfill.store import books
from crossfill.store.tables import RebalanceMove

# The journal purpose of a move's transactions: `bridge:<request id>:<step>`
# (`treasury.intents_api_bridge.step_purpose`).
BRIDGE_PURPOSE = "bridge:"


async def under_way(session: AsyncSession) -> list[RebalanceMove]:
    """The moves not yet ended (quoted or sent), oldest first."""
    rows = await session.scalars(
        select(RebalanceMove).where(RebalanceMove.status.in_(UNDER_WAY)).order_by(RebalanceMove.id)
    )
    return list(rows)


def in_transit_of(moves: Iterable[RebalanceMove]) -> dict[int, Amounts]:
    """Per destination chain, by lower-case currency, what the `sent` moves will bring."""
    by_chain: dict[int, Amounts] = {}
    for move in moves:
        if move.status != SENT:
            continue
        amounts = by_chain.setdefault(move.destination_chain_id, {})
        currency = move.currency_out.lower()
        amounts[currency] = amounts.get(currency, 0) + int(move.amount_out)
    return by_chain


async def in_transit(session: AsyncSession) -> dict[int, Amounts]:
    return in_transit_of(await under_way(session))


async def refused_since(session: AsyncSession, since: datetime) -> dict[tuple[int, int, str], str]:
    """(origin, destination, symbol) of the moves that failed since `since`, with why (the
    latest's reason): not asked for again meanwhile."""
    rows = await session.execute(
        select(
            RebalanceMove.origin_chain_id,
            RebalanceMove.destination_chain_id,
            RebalanceMove.symbol,
            RebalanceMove.reason,
        )
        .where(RebalanceMove.status == FAILED, RebalanceMove.ended_at >= since)
        .order_by(RebalanceMove.id)
    )
    return {
        (origin, destination, symbol): reason or "no reason recorded"
        for origin, destination, symbol, reason in rows
    }


def bridge_step(purpose: str) -> tuple[str, int] | None:
    """The bridge request id and step index a journal purpose names; None for another."""
    if not purpose.startswith(BRIDGE_PURPOSE):
        return None
    request_id, _, step = purpose.removeprefix(BRIDGE_PURPOSE).rpartition(":")
    return (request_id, int(step)) if step.isdigit() and request_id else None


async def step_mined(session: AsyncSession, purpose: str, sender: str, *, now: datetime) -> None:
    """A bridge step of the solver mined successfully: the move's last step (its deposit) is
    the rebalance out on its origin, posted once in the transaction that records it mined."""
    step = bridge_step(purpose)
    if step is None:
        return
    request_id, index = step
    move = await session.scalar(select(RebalanceMove).where(RebalanceMove.request_id == request_id))
    if move is None or move.quote is None or index != len(move.quote["calls"]) - 1:
        return
    await books.rebalanced_out(session, move, sender, now=now)
