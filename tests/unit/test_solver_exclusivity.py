"""The solver and an order an external solver won (docs/solvers.md), on the in-memory chain:
left to its winner while exclusive, its winner's fill found by the Filler's event and taken as
the order's; after the exclusivity (a head past its deadline) filled by the fallback with
`fillExclusive` under signed terms; a fallback that lost the race to a late winner takes the
winner's fill, with nothing refunded."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from eth_account import Account
from sqlalchemy import insert, select

from crossfill.contracts.abi import function
from crossfill.kinds.evm.client import BlockHead
from crossfill.store import requests
from crossfill.store.db import as_utc
from crossfill.store.tables import Solver as Solver_
from crossfill.store.tables import SolverFade
from tests.unit.solver_world import SolverWorld, reverted, store_pending_request
from tests.unit.worker_world import chain_world

WINNER = Account.create().address.lower()


@dataclass
class World(SolverWorld):
    """The solver's world, its request an order `WINNER` won, exclusive until `deadline`."""

    deadline: int

    def head_at(self, timestamp: int) -> None:
        head = self.chain.head_block
        self.chain.head_block = BlockHead(head.number + 1, timestamp, "0x" + "22" * 32, 1)
        self.state.record_head(self.chain.head_block, 0.0)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        deadline = base.chain.head_block.timestamp + 10
        row = await store_pending_request(
            base,
            10**17,
            exclusive_solver=WINNER,
            exclusivity_deadline=datetime.fromtimestamp(deadline, UTC),
            operator_amount_out=str(10**17 - 10**14),
        )
        yield World(base, base.solver(), row["id"], row["order_id"], deadline)


async def test_an_exclusive_order_is_left_to_its_winner_until_a_head_past_its_deadline(
    world: World,
) -> None:
    await world.solver.tick()
    world.head_at(world.deadline)  # at the deadline: still the winner's
    await world.solver.tick()
    assert (await world.request()).status == "pending"
    assert world.chain.sent == []

    world.head_at(world.deadline + 1)
    await world.solver.tick()

    assert (await world.request()).status == "submitted"
    (sent,) = world.chain.sent
    data = world.chain.sent_facts[sent].data
    assert data.startswith(function("Filler", "fillExclusive").selector)


async def test_the_winners_fill_found_on_chain_is_the_orders(world: World) -> None:
    world.chain.filled[world.order_id] = "0x" + "ab" * 32
    world.head_at(world.deadline - 5)
    await world.solver.tick()
    request = await world.request()
    assert request.status == "submitted"
    assert world.chain.sent == []  # nothing of ours


async def test_a_fallback_that_finds_the_order_filled_takes_that_fill(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.head_at(world.deadline + 1)
    late = "0x" + "cd" * 32
    looked: list[str] = []

    async def fill_tx_hashes(filler: str, order_id: str, *, not_before: int) -> list[str]:
        # The winner's late fill lands after the head's look for it, before the fallback's
        # simulation.
        looked.append(order_id)
        return [late] if len(looked) > 1 else []

    monkeypatch.setattr(world.chain, "fill_tx_hashes", fill_tx_hashes)
    world.chain.faults["estimate_gas"].append(reverted("AlreadyFilled", b""))
    await world.solver.tick()

    request = await world.request()
    assert request.status == "submitted" and request.fail_reason is None
    assert world.chain.sent == [] and len(looked) == 2
    async with world.solver.sessions() as session:
        (fill,) = await requests.transactions_of(session, world.request_id)
    assert fill.tx_hash == late


async def test_a_fallback_reverted_by_a_late_winners_fill_is_no_failure(world: World) -> None:
    world.head_at(world.deadline + 1)
    await world.solver.tick()
    (ours,) = world.chain.sent
    # The winner's fill came first in the block: ours reverted there.
    late = "0x" + "ef" * 32
    world.chain.mine(ours, status=0)
    world.chain.mine(late)
    world.chain.filled[world.order_id] = late
    await world.solver.tick()

    request = await world.request()
    assert request.status == "success" and request.fail_reason is None
    async with world.solver.sessions() as session:
        (fill,) = await requests.transactions_of(session, world.request_id)
        fades = list(await session.scalars(select(SolverFade)))
    assert (fill.tx_hash, fill.status) == (late, "success")
    assert fades == []  # the winner filled: no fade


async def test_a_fallback_fill_is_the_winners_fade_once(world: World) -> None:
    now = world.base.clock()
    fader = {
        "name": "fader", "evm_address": WINNER, "addresses": {"evm": WINNER},
        "bid_url": "http://127.0.0.1:9/bid", "routes": [], "max_size_usd_micros": 1,
        "reputation": 100, "consecutive_fades": 1, "created_at": now, "updated_at": now,
    }  # fmt: skip
    async with world.base.engine.begin() as connection:
        await connection.execute(insert(Solver_), [fader])
    world.head_at(world.deadline + 1)
    await world.solver.tick()
    (ours,) = world.chain.sent
    world.chain.mine(ours)
    world.chain.receipts[ours]["from"] = world.solver.txmanager.sender
    await world.solver.tick()
    await world.solver.tick()

    assert (await world.request()).status == "success"
    async with world.solver.sessions() as session:
        (fade,) = list(await session.scalars(select(SolverFade)))
        solver = (await session.scalars(select(Solver_))).one()
    # Its output above the operator's own (10^14), and the fill's gas (50,000 at 2 wei).
    assert (fade.cost, fade.state, fade.consecutive) == (str(10**14 + 100_000), "owed", 2)
    assert solver.consecutive_fades == 2
    # A second fade in a row: twice the base cooldown.
    assert solver.cooldown_until is not None
    assert as_utc(solver.cooldown_until) == now + timedelta(seconds=120)
