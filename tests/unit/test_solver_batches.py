"""The solver's fills in batches, on the in-memory chain port: everything ready at a tick is
simulated together, signed under consecutive nonces, journalled in one transaction and sent
together; each order is still judged on its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import insert, select

from crossfill.app.fills import stored_fill_plan
from crossfill.contracts.reverts import RevertReason
from crossfill.errors import Reverted
from crossfill.first_on_loop import fill_path
from crossfill.kinds.evm.solver import FILL, Solver
from crossfill.kinds.evm.state import ChainState
from crossfill.store import signer_leases
from crossfill.store.tables import LedgerEntry, Request, RequestTransaction, SentTransaction
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.unit.fake_chain import FakeChain
from tests.unit.solver_world import pending_request
from tests.unit.worker_world import ChainWorld, Clock, chain_world

ORDERS = 6
OUTPUT = 10**17


@dataclass
class Batch:
    chain: FakeChain
    state: ChainState
    solver: Solver
    clock: Clock
    request_ids: list[str]
    world: ChainWorld

    async def statuses(self) -> dict[str, str]:
        async with self.solver.sessions() as session:
            rows = await session.scalars(select(Request).where(Request.id.in_(self.request_ids)))
            return {row.id: row.status for row in rows}

    async def journal(self) -> list[SentTransaction]:
        async with self.solver.sessions() as session:
            rows = await session.scalars(select(SentTransaction).order_by(SentTransaction.nonce))
            return list(rows)


@pytest.fixture
async def batch(tmp_path: Path) -> AsyncIterator[Batch]:
    async with chain_world(tmp_path) as base:
        solver = base.solver()
        rows = [pending_request(index, base.config.id, OUTPUT) for index in range(ORDERS)]
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), rows)
        yield Batch(base.chain, base.state, solver, base.clock, [row["id"] for row in rows], base)


async def test_fills_ready_together_go_under_consecutive_nonces_in_one_broadcast(
    batch: Batch,
) -> None:
    await batch.solver.tick()
    journal = await batch.journal()
    assert [row.nonce for row in journal] == list(range(ORDERS))
    assert {row.request_id for row in journal} == set(batch.request_ids)
    assert {row.status for row in journal} == {"broadcast"}
    assert batch.chain.calls.count("send_raw_batch") == 1
    assert sorted(batch.chain.sent) == sorted(row.tx_hash for row in journal)
    assert set((await batch.statuses()).values()) == {"submitted"}


async def test_one_order_the_contract_refuses_leaves_the_others_going(batch: Batch) -> None:
    batch.chain.fail(
        "estimate_gas", Reverted("reverted", data=b"", reason=RevertReason("OrderExpired", ()))
    )
    await batch.solver.tick()
    statuses = await batch.statuses()
    assert sorted(statuses.values()) == ["failure"] + ["submitted"] * (ORDERS - 1)
    journal = await batch.journal()
    assert [row.nonce for row in journal] == list(range(ORDERS - 1))  # no nonce left unused
    assert len(batch.chain.sent) == ORDERS - 1


async def test_a_batch_the_key_can_pay_in_part_signs_only_what_it_can_pay(batch: Batch) -> None:
    batch.state.solver_balances = {NATIVE_EVM_ADDRESS: 2 * OUTPUT + 10**16}  # two fills' worth
    await batch.solver.tick()
    journal = await batch.journal()
    assert [row.nonce for row in journal] == [0, 1]
    assert sorted((await batch.statuses()).values()) == ["pending"] * 4 + ["submitted"] * 2
    assert batch.state.solver_shortfall  # the rest wait for a top-up, published


async def test_a_fill_journalled_before_is_resumed_in_its_batch_not_signed_again(
    batch: Batch,
) -> None:
    """A process that journalled (and perhaps sent) one fill died before recording it: the
    batch that claims it again sends that one, and signs the others anew."""
    txmanager = batch.solver.txmanager
    first = batch.request_ids[0]
    earlier = await txmanager.send(
        to=batch.solver.config.contracts.filler, data=b"\x01", value=0, gas_limit=100_000,
        purpose=FILL, request_id=first,
    )  # fmt: skip
    await batch.solver.tick()
    journal = await batch.journal()
    assert [row.request_id for row in journal].count(first) == 1
    assert len(journal) == ORDERS
    assert [row.nonce for row in journal] == list(range(ORDERS))
    assert earlier.tx_hash in {row.tx_hash for row in journal}
    assert set((await batch.statuses()).values()) == {"submitted"}


async def test_a_batch_whose_lease_was_lost_journals_and_sends_nothing(batch: Batch) -> None:
    """The fencing token is checked in the batch's journal transaction: a process that lost
    the key's lease after it last held it (frozen, say) signs nothing in its name."""
    await batch.solver.txmanager.hold_signer()
    async with batch.solver.sessions() as session, session.begin():
        await signer_leases.release_all(session)
        claim = signer_leases.LeaseClaim(
            batch.solver.config.id,
            batch.solver.txmanager.sender,
            holder="another process",
            lease=batch.solver.txmanager.lease,
            restarting=False,
        )
        assert await signer_leases.take(session, claim, now=batch.clock()) is not None
    await batch.solver.fill_tick()
    assert await batch.journal() == []
    assert batch.chain.sent == []
    assert set((await batch.statuses()).values()) == {"pending"}


class Killed(BaseException):
    """The process dies (kill -9): nothing after this point runs."""


async def test_a_kill_between_the_batch_journal_and_its_broadcast_pays_each_order_once(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch is journalled (committed), then the process dies before the node has any of
    it. Started again, it sends the journalled fills again, the same bytes, and signs none
    anew: one transaction per order, whatever the journal held."""

    async def killed(_raw: object) -> list[str]:
        raise Killed

    monkeypatch.setattr(batch.chain, "send_raw_batch", killed)
    with pytest.raises(Killed):
        await batch.solver.tick()
    journalled = await batch.journal()
    assert len(journalled) == ORDERS and batch.chain.sent == []
    monkeypatch.undo()

    solver = batch.world.solver(batch.solver.txmanager.account)  # the same key, restarted
    restarted = solver.txmanager
    await restarted.rebroadcast()
    assert sorted(set(batch.chain.sent)) == sorted(row.tx_hash for row in journalled)
    # Long after (the dead process's request leases lapsed; its fills, unmined, now stuck).
    batch.clock.advance(timedelta(minutes=2))
    await solver.tick()
    journal = await batch.journal()
    nonces = {row.request_id: {r.nonce for r in journal if r.request_id == row.request_id}
              for row in journalled}  # fmt: skip
    # Each order under the one nonce it was first signed with: replacements of it at most,
    # of which only one can ever be mined.
    assert nonces == {row.request_id: {row.nonce} for row in journalled}
    assert set((await batch.statuses()).values()) == {"submitted"}
    batch.chain.mine_block()
    await solver.tick()
    assert set((await batch.statuses()).values()) == {"success"}
    assert len(batch.chain.receipts) == ORDERS


async def test_fills_mined_together_are_recorded_together_and_unmined_ones_not_looked_up(
    batch: Batch,
) -> None:
    """At a head, the fills whose nonces the chain has used are settled with their receipts;
    those past the chain's nonce count are not asked for a receipt at all."""
    async with batch.solver.sessions() as session, session.begin():
        for request in await session.scalars(select(Request)):  # planned when quoted
            request.fill_plan = stored_fill_plan(request, batch.solver.config).to_json()
    await batch.solver.tick()
    journal = await batch.journal()
    mined, unmined = journal[:4], journal[4:]
    for row in mined:
        batch.chain.mine(row.tx_hash)
    batch.chain.calls.clear()
    await batch.solver.track_tick()
    assert batch.chain.calls.count("mined_nonce") == 1
    assert batch.chain.calls.count("receipt") == len(mined)
    statuses = await batch.statuses()
    assert {statuses[row.request_id or ""] for row in mined} == {"success"}
    assert {statuses[row.request_id or ""] for row in unmined} == {"submitted"}
    assert [row.status for row in await batch.journal()] == ["mined"] * 4 + ["broadcast"] * 2
    async with batch.solver.sessions() as session:
        fills = await session.scalars(
            select(RequestTransaction).where(RequestTransaction.kind == FILL)
        )
        recorded = {fill.tx_hash: fill.status for fill in fills}
        events = set(await session.scalars(select(LedgerEntry.event)))
    assert recorded == {row.tx_hash: "success" for row in mined} | {
        row.tx_hash: "pending" for row in unmined
    }
    # In the books, each mined fill's gas and what it spent; nothing of the others.
    chain_id = batch.solver.config.id
    assert events == {f"gas:{chain_id}:{row.tx_hash}" for row in mined} | {
        f"fill:{row.request_id}" for row in mined
    }


async def test_fills_queued_hold_the_loop_until_they_are_out(batch: Batch) -> None:
    """Requests handed over hold the process's other work back (`first_on_loop`) until the
    tick that sends their fills; the fills in flight are then followed as ever."""
    solver = batch.solver
    await solver.txmanager.hold_signer()
    for request_id in batch.request_ids:
        solver.take(request_id)
    assert fill_path().holding(solver)
    await solver.fill_tick()
    assert not fill_path().holding(solver)
    assert set((await batch.statuses()).values()) == {"submitted"}
    for row in await batch.journal():
        batch.chain.mine(row.tx_hash)
    await solver.recorded()
    await solver.track_tick()
    assert set((await batch.statuses()).values()) == {"success"}
