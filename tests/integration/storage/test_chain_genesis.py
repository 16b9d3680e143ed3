"""A chain that started over: its requests, deposits, journal and cursors are forgotten, every
other chain's and the operator's settings stay (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import cast

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.errors import ChainUnreachable, ConfigError
from crossfill.runtime import Runtime
from crossfill.settings import Mode
from crossfill.store import chain_controls, chain_genesis
from crossfill.store.db import session_factory
from crossfill.store.tables import AddressTransfer, ChainCursor, Request, RequestTransaction
from crossfill.workers.genesis import bind_state_to_chains
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


@dataclass
class _Chain:
    """A chain of some kind as the genesis check sees it: its id and what names its history."""

    chain_id: int
    names: str | None
    reachable: bool = True

    async def genesis(self) -> str | None:
        if not self.reachable:
            raise ChainUnreachable("connection refused")
        return self.names


def _runtime(engine: AsyncEngine, mode: Mode, *chains: _Chain) -> Runtime:
    return cast(
        Runtime,
        SimpleNamespace(
            kind_chains={chain.chain_id: chain for chain in chains},
            sessions=session_factory(engine),
            settings=SimpleNamespace(mode=mode),
        ),
    )


async def test_every_kind_with_a_history_is_bound_to_it_and_a_devnet_restart_forgets_its_own(
    engine: AsyncEngine,
) -> None:
    """An EVM block hash and an SVM genesis hash alike; the exchange (no history) and an
    unreachable chain are left unbound; a chain started over on the devnet loses its requests,
    and only its own."""
    data = synthetic_requests(40)
    async with engine.begin() as connection:
        await insert_synthetic(connection, data)
    restarted = data.requests[0]["origin_chain_id"]
    sessions = session_factory(engine)
    first = _runtime(
        engine, Mode.DEVNET,
        _Chain(restarted, "0x" + "aa" * 32), _Chain(792703809, "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"),
        _Chain(1337, None), _Chain(900009, "0x" + "cc" * 32, reachable=False),
    )  # fmt: skip
    await bind_state_to_chains(first, now=lambda: NOW)
    async with sessions() as session:
        assert await chain_genesis.recorded(session, restarted) == "0x" + "aa" * 32
        assert await chain_genesis.recorded(session, 792703809) is not None
        assert await chain_genesis.recorded(session, 1337) is None
        assert await chain_genesis.recorded(session, 900009) is None
        before = await session.scalar(select(func.count()).select_from(Request))

    await bind_state_to_chains(first, now=lambda: NOW)  # the same chains: nothing forgotten
    again = _runtime(engine, Mode.DEVNET, _Chain(restarted, "0x" + "bb" * 32))
    await bind_state_to_chains(again, now=lambda: NOW)
    touching = sum(
        1 for row in data.requests
        if restarted in (row["origin_chain_id"], row["destination_chain_id"])
    )  # fmt: skip
    async with sessions() as session:
        left = await session.scalar(select(func.count()).select_from(Request))
        assert (before, left) == (len(data.requests), len(data.requests) - touching)
        assert await chain_genesis.recorded(session, restarted) == "0x" + "bb" * 32


async def test_production_refuses_a_chain_whose_history_is_not_the_stored_ones(
    engine: AsyncEngine,
) -> None:
    await bind_state_to_chains(
        _runtime(engine, Mode.PRODUCTION, _Chain(792703809, "genesis-one")), now=lambda: NOW
    )
    with pytest.raises(ConfigError, match="wrong RPC URL or database"):
        await bind_state_to_chains(
            _runtime(engine, Mode.PRODUCTION, _Chain(792703809, "genesis-two")), now=lambda: NOW
        )
