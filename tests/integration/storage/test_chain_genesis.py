"""A chain that started over: its requests, deposits, journal and cursors are forgotten, every
other chain's and the operator's settings stay (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store import chain_controls, chain_genesis
from crossfill.store.db import session_factory
from crossfill.store.tables import AddressTransfer, ChainCursor, Request, RequestTransaction
from tests.support.synthetic import insert_synthetic, synthetic_requests

NOW = datetime(2026, 11, 23, tzinfo=UTC)


async def test_forgetting_a_chain_keeps_other_chains_and_operator_settings(
    engine: AsyncEngine,
) -> None:
    data = synthetic_requests(200)
    async with engine.begin() as connection:
        await insert_synthetic(connection, data)
    pairs = Counter((row["origin_chain_id"], row["destination_chain_id"]) for row in data.requests)
    restarted = next(iter(pairs))[0]
    untouched = sum(n for (origin, dest), n in pairs.items() if restarted not in (origin, dest))
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        await chain_controls.set_disabled(session, restarted, disabled=True, reason="incident")
        for chain_id in {origin for origin, _ in pairs}:
            session.add(
                ChainCursor(
                    chain_id=chain_id,
                    role="indexer",
                    block_number=499,
                    block_hash="0x" + "00" * 32,
                    updated_at=NOW,
                )
            )
        await chain_genesis.record(session, restarted, "0x" + "aa" * 32, NOW)

    async with sessions() as session, session.begin():
        removed = await chain_genesis.forget_chain_state(session, restarted)
        await chain_genesis.record(session, restarted, "0x" + "bb" * 32, NOW)

    async with sessions() as session:
        assert removed == len(data.requests) - untouched
        assert await session.scalar(select(func.count()).select_from(Request)) == untouched
        orphans = select(func.count()).select_from(RequestTransaction)
        orphans = orphans.where(RequestTransaction.request_id.not_in(select(Request.id)))
        assert await session.scalar(orphans) == 0
        cursors = set(await session.scalars(select(ChainCursor.chain_id)))
        assert restarted not in cursors and cursors
        assert await chain_controls.disabled_overrides(session) == {restarted: True}
        assert await chain_genesis.recorded(session, restarted) == "0x" + "bb" * 32


async def test_forgetting_a_chain_forgets_the_transfers_to_its_deposit_addresses(
    engine: AsyncEngine,
) -> None:
    """A transfer to a deposit address refers to the request it paid: forgetting the chain
    forgets it with the request (the request could not be deleted under it)."""
    data = synthetic_requests(20)
    async with engine.begin() as connection:
        await insert_synthetic(connection, data)
    request = data.requests[0]
    restarted = request["origin_chain_id"]
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        session.add(
            AddressTransfer(
                chain_id=restarted,
                address="0x" + "22" * 20,
                tx_hash="0x" + "33" * 32,
                log_index=0,
                block_number=1,
                block_hash="0x" + "44" * 32,
                currency="0x" + "55" * 20,
                amount="1",
                depositor="0x" + "66" * 20,
                request_id=request["id"],
                state="swept",
                created_at=NOW,
            )
        )
    async with sessions() as session, session.begin():
        await chain_genesis.forget_chain_state(session, restarted)
    async with sessions() as session:
        assert await session.scalar(select(func.count()).select_from(AddressTransfer)) == 0
        assert await session.get(Request, request["id"]) is None
