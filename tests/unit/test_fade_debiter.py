"""The fade debiter on the in-memory chain (`kinds.evm.fade_debiter`): a fade's debit sent
once by the allocator, never more than the bond holds, found journalled after a restart rather
than sent again, and once mined recorded at what the bond logged, booked as the solver key's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from eth_abi.abi import encode
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import insert, select

from crossfill.contracts import calldata
from crossfill.contracts.abi import event, function
from crossfill.domain import books
from crossfill.kinds.evm.fade_debiter import FadeDebiter
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.store.tables import LedgerEntry, Request, SolverFade
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.synthetic import synthetic_requests
from tests.unit.worker_world import START, ChainWorld, chain_world

BOND = "0x" + "b0" * 20
FADER = Account.create().address.lower()
SOLVER_KEY = Account.create().address.lower()
HELD = 600


@dataclass
class World:
    base: ChainWorld
    runtime: ChainRuntime
    allocator: LocalAccount
    fade_id: int
    order_id: str

    def debiter(self) -> FadeDebiter:
        """The debiter as a process starts it (a restart: a new one)."""
        txmanager = TxManager(
            self.base.chain, self.base.state, self.allocator, self.base.sessions,
            now=self.base.clock, holder="me",
        )  # fmt: skip
        return FadeDebiter(
            self.runtime, self.base.sessions, txmanager, now=self.base.clock,
            interval_seconds=0.1, pay_to=SOLVER_KEY,
        )  # fmt: skip

    async def fade(self) -> SolverFade:
        async with self.base.sessions() as session:
            row = await session.get(SolverFade, self.fade_id)
        assert row is not None
        return row


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        contracts = base.config.contracts.model_copy(update={"solver_bond": BOND})
        config = base.config.model_copy(update={"contracts": contracts})
        runtime = ChainRuntime(
            config, base.chain, base.state, base.runtime.follower, base.runtime.positions
        )
        (request,) = synthetic_requests(1, start=START).requests
        fade = {
            "solver_id": 1, "solver_address": FADER, "request_id": request["id"],
            "chain_id": config.id, "currency": NATIVE_EVM_ADDRESS, "cost": "1000",
            "consecutive": 1, "cooldown_until": START, "state": "owed", "created_at": START,
        }  # fmt: skip
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), [request])
            await connection.execute(insert(SolverFade), [fade])
            fade_id = (await connection.execute(select(SolverFade.id))).scalar_one()
        base.chain.codes[BOND] = b"\x60\x00"
        base.chain.call_answers[(BOND, calldata.solver_bond_of(FADER, NATIVE_EVM_ADDRESS))] = (
            HELD.to_bytes(32, "big")
        )
        pending = calldata.solver_bond_pending(FADER, NATIVE_EVM_ADDRESS)
        base.chain.call_answers[(BOND, pending)] = bytes(64)
        yield World(base, runtime, base.signer(), fade_id, request["order_id"])


def _debited_log(amount: int, order_id: str) -> dict[str, object]:
    """`SolverBond.Debited(FADER, native, amount, SOLVER_KEY, orderId)` as a node logs it."""
    topic = event("SolverBond", "Debited").topic
    return {
        "address": BOND,
        "topics": [topic, "0x" + FADER[2:].rjust(64, "0"), "0x" + "00" * 32],
        "data": "0x"
        + encode(
            ["uint256", "address", "bytes32"], [amount, SOLVER_KEY, bytes.fromhex(order_id[2:])]
        ).hex(),
        "logIndex": 0,
        "transactionHash": "0x",
        "blockNumber": 0,
    }


async def test_a_fades_debit_is_sent_once_within_the_bond_and_booked(world: World) -> None:
    await world.debiter().tick()
    (sent,) = world.base.chain.sent
    data = world.base.chain.sent_facts[sent].data
    debit = function("SolverBond", "debit")
    assert data[:4] == debit.selector
    solver, currency, amount, to, order = debit.decode_arguments(data[4:])
    # The cost is 1,000; the bond holds 600: never more than it holds.
    assert (solver.lower(), currency.lower(), amount, to.lower()) == (
        FADER, NATIVE_EVM_ADDRESS, HELD, SOLVER_KEY,
    )  # fmt: skip
    assert bytes(order) == bytes.fromhex(world.order_id[2:])
    assert (await world.fade()).state == "sending"

    await world.debiter().tick()  # a restart: found journalled, in flight
    assert world.base.chain.sent == [sent]

    world.base.chain.mine(sent, logs=[_debited_log(HELD, world.order_id)])
    await world.debiter().tick()
    fade = await world.fade()
    assert (fade.state, fade.debited, fade.tx_hash) == ("debited", str(HELD), sent)
    async with world.base.sessions() as session:
        entries = list(
            await session.scalars(select(LedgerEntry).where(LedgerEntry.event == f"fade:{fade.id}"))
        )
    assert sorted((e.account, int(e.amount)) for e in entries) == sorted(
        [(books.key_account(SOLVER_KEY), HELD), (books.FADE_PENALTIES, -HELD)]
    )
    assert world.base.chain.sent == [sent]
