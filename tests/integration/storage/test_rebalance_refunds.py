"""A refunded move in the store, on SQLite and PostgreSQL: its refund posted once however
often it is booked, after its rebalance out (posted first if not yet), clearing the origin's
`in_transit`; and a refused route read back with why it was refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.domain import books
from crossfill.domain.rebalancing import FAILED, REFUNDED
from crossfill.store import books as ledger
from crossfill.store import rebalancing
from crossfill.store.db import session_factory
from crossfill.store.tables import RebalanceMove

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
ORIGIN, DESTINATION = 900001, 900002
NATIVE = "0x" + "00" * 20
SOLVER = "0x" + "50" * 20


def _move(status: str, *, request_id: str | None, reason: str | None = None) -> RebalanceMove:
    return RebalanceMove(
        origin_chain_id=ORIGIN, destination_chain_id=DESTINATION, currency_in=NATIVE,
        currency_out=NATIVE, symbol="ETH", amount="1000", amount_out="990",
        request_id=request_id, status=status, reason=reason, created_at=NOW, ended_at=NOW,
    )  # fmt: skip


async def test_a_refunded_move_is_posted_once_clearing_its_in_transit(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        move = _move(REFUNDED, request_id="0x" + "01" * 32)
        session.add(move)
        await session.flush()
        for _ in range(2):  # booked again after a restart: posted once
            await ledger.rebalance_refunded(session, move, SOLVER, 970, now=NOW)
    async with sessions() as session:
        held = await ledger.balances(session)
    assert held.get((ORIGIN, NATIVE, books.IN_TRANSIT), 0) == 0
    assert held[(ORIGIN, NATIVE, books.key_account(SOLVER))] == -1000 + 970
    assert held[(ORIGIN, NATIVE, books.BRIDGE_FEES)] == 30
    assert sum(amount for (chain, _, _), amount in held.items() if chain == ORIGIN) == 0


async def test_a_refused_route_is_read_with_why(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        session.add(_move(FAILED, request_id=None, reason="refused by the bridge: no"))
    async with sessions() as session:
        refused = await rebalancing.refused_since(session, NOW - timedelta(minutes=1))
        later = await rebalancing.refused_since(session, NOW + timedelta(minutes=1))
    assert refused == {(ORIGIN, DESTINATION, "ETH"): "refused by the bridge: no"}
    assert later == {}
