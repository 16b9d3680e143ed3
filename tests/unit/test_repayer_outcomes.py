"""The repayer on the in-memory chain port: owed deposits whose fills are final are paid to the
solver in one transaction; a fill not final (or gone from its chain) waits; a chain failure
ends the tick (the loop backs off) and is retried, a batch recorded but never journalled is
signed again as the same payouts; a deposit some other payout paid first is recorded so and
never sent; a payout a mined batch did not pay is sent again, or recorded taken."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from eth_abi.abi import encode
from eth_account import Account
from eth_utils.crypto import keccak
from sqlalchemy import insert, select

from crossfill.app.refunds import payout_nonce
from crossfill.contracts.abi import function
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.repayments import BatchRules
from crossfill.errors import ChainUnreachable
from crossfill.kinds.evm.chain import EvmChain
from crossfill.kinds.evm.client import CallOutcome
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.evm.fill_finality import FillFinality
from crossfill.kinds.evm.follower import ChainFollower
from crossfill.kinds.evm.positions import UserPositions
from crossfill.kinds.evm.repayer import Repayer
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.state import ChainState
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.metrics import Metrics
from crossfill.store import deposits
from crossfill.store.tables import Deposit, Repayment, Request, RequestTransaction, SentTransaction
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId
from tests.support.synthetic import synthetic_requests
from tests.unit.deployment_samples import sample_deployment
from tests.unit.fake_chain import FakeChain
from tests.unit.receipt_logs import call_executed_log
from tests.unit.worker_world import START, ChainWorld, chain_world

DEPOSITED = 10**17
# The sample chains' tiers: a deposit without a price (none here) needs the deepest, 32 blocks.
FINAL = 32
NONCE_USED_SELECTOR = keccak(text="NonceAlreadyUsed(uint256)")[:4]


@dataclass
class DepositoryChain(FakeChain):
    """The origin chain, its Depository's replay guard scripted: a payout under a nonce in
    `used` reverts (NonceAlreadyUsed) and `nonceUsed` says so; every other payout executes."""

    used: set[int] = field(default_factory=set)

    async def simulate(self, call: dict[str, Any], *, block: int | None = None) -> CallOutcome:
        self._called("simulate")
        data = bytes.fromhex(call["data"][2:])
        if data[:4] == function("Depository", "nonceUsed").selector:
            (nonce,) = function("Depository", "nonceUsed").decode_arguments(data[4:])
            return CallOutcome(True, encode(["bool"], [nonce in self.used]), [])
        (calls,) = function("Multicaller", "aggregate3").decode_arguments(data[4:])
        results = []
        for _target, _allowed, payout in calls:
            (request, _signature) = function("Depository", "execute").decode_arguments(payout[4:])
            nonce = request[1]
            refused = NONCE_USED_SELECTOR + encode(["uint256"], [nonce])
            results.append((True, b"") if nonce not in self.used else (False, refused))
        return CallOutcome(True, encode(["(bool,bytes)[]"], [results]), [])


@dataclass
class World:
    base: ChainWorld
    origin: DepositoryChain
    destination: FakeChain
    destination_state: ChainState
    repayer: Repayer
    deposit_ids: list[int]

    async def repayments(self) -> list[Repayment]:
        async with self.base.sessions() as session:
            return list(await session.scalars(select(Repayment).order_by(Repayment.deposit_id)))

    async def journal(self) -> list[SentTransaction]:
        async with self.base.sessions() as session:
            return list(await session.scalars(select(SentTransaction).order_by(SentTransaction.id)))

    def mine_destination(self, blocks: int) -> None:
        for _ in range(blocks):
            self.destination.push_head()
        self.destination_state.record_head(self.destination.head_block, 0.0)

    def mine_repayment(self, tx_hash: str, paid: list[Repayment]) -> None:
        depository = self.base.config.contracts.depository
        self.origin.mine(
            tx_hash,
            logs=[call_executed_log(depository, payout_id=str(row.payout_id)) for row in paid],
        )


def _destination_runtime(chain: FakeChain) -> tuple[ChainRuntime, ChainState]:
    config = evm_chains(sample_deployment())[0]
    state = ChainState(chain_id=config.id, lag_threshold_seconds=None, started_at=0.0)
    state.record_head(chain.head_block, 0.0)
    follower = ChainFollower(
        chain, state, config=config, solver="0x", tokens=(), interval_seconds=1, clock=float,
        metrics=Metrics(),
    )  # fmt: skip
    return ChainRuntime(config, chain, state, follower, UserPositions(chain, state)), state


def _fill_hash(index: int) -> str:
    return "0x" + f"f{index:063x}"


async def _owed(base: ChainWorld, destination: FakeChain, count: int, fill_block: int) -> list[int]:
    """`count` requests filled on the destination in `fill_block`, each paid by a deposit."""
    ids = []
    for index, row in enumerate(synthetic_requests(count, seed=3, start=START).requests):
        row.update(
            status="success", origin_chain_id=base.config.id,
            destination_chain_id=destination.chain_id, origin_currency=NATIVE_EVM_ADDRESS,
        )  # fmt: skip
        fill = _fill_hash(index)
        block = await destination.block_at(fill_block)
        assert block is not None
        destination.receipts[fill] = {
            "status": 1,
            "blockNumber": fill_block,
            "blockHash": block.hash,
        }
        async with base.sessions() as session, session.begin():
            await session.execute(insert(Request), [row])
            session.add(
                RequestTransaction(
                    request_id=row["id"],
                    kind="fill",
                    chain_id=destination.chain_id,
                    tx_hash=fill,
                    block_number=fill_block,
                    status="success",
                    created_at=START,
                )
            )
            deposit = Deposit(
                chain_id=base.config.id, tx_hash="0x" + f"d{index:063x}", log_index=0, part=0,
                block_number=90, block_hash="0x" + "be" * 32, order_id=row["order_id"],
                depositor=row["user_address"], currency=NATIVE_EVM_ADDRESS, amount=str(DEPOSITED),
                state=deposits.CONFIRMED, request_id=row["id"], outcome=DepositVerdict.ACCEPTED,
                created_at=START,
            )  # fmt: skip
            session.add(deposit)
            await session.flush()
            ids.append(deposit.id)
    return ids


@asynccontextmanager
async def _world(tmp_path: Path, *, fills_deep: int) -> AsyncIterator[World]:
    """Two requests filled on the destination `fills_deep` blocks under its head, each paid
    by a deposit on the origin owed to the solver."""
    async with chain_world(tmp_path) as base:
        origin = DepositoryChain(base.chain.chain_id)
        base.chain = base.runtime.client = origin
        destination = FakeChain(ChainId(900001))
        runtime, state = _destination_runtime(destination)
        txmanager = TxManager(
            origin, base.state, base.signer(), base.sessions, now=base.clock, holder="me"
        )
        repayer = Repayer(
            base.runtime, base.sessions, txmanager, allocator=Account.create(),
            finality=FillFinality(
                {destination.chain_id: EvmChain(runtime)}, {destination.chain_id: runtime}
            ),
            rules=BatchRules(size=20, max_age=timedelta(0), min_value_usd_micros=0),
            metrics=base.metrics, now=base.clock, interval_seconds=0.1,
        )  # fmt: skip
        fill_block = destination.head_block.number - fills_deep + 1
        deposit_ids = await _owed(base, destination, 2, fill_block=fill_block)
        yield World(base, origin, destination, state, repayer, deposit_ids)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with _world(tmp_path, fills_deep=FINAL) as final:
        yield final


async def test_final_fills_deposits_are_repaid_in_one_transaction(world: World) -> None:
    await world.repayer.tick()
    (sent,) = await world.journal()
    rows = await world.repayments()
    assert [row.state for row in rows] == ["sending", "sending"]
    assert {row.batch for row in rows} == {sent.purpose} and sent.request_id is None
    assert all(row.payout_id and int(row.amount) == DEPOSITED for row in rows)
    world.mine_repayment(sent.tx_hash, rows)
    await world.repayer.tick()
    rows = await world.repayments()
    assert [(row.state, row.tx_hash, row.batch_size) for row in rows] == [
        ("repaid", sent.tx_hash, 2)
    ] * 2
    assert sum(row.gas_used or 0 for row in rows) == 50_000  # the fake receipt's gas
    assert sum(int(row.fee or 0) for row in rows) == 100_000
    assert len(await world.journal()) == 1


async def test_a_fill_not_yet_final_or_gone_from_its_chain_waits(tmp_path: Path) -> None:
    async with _world(tmp_path, fills_deep=FINAL - 1) as world:
        await world.repayer.tick()
        assert await world.repayments() == []
        del world.destination.receipts[_fill_hash(0)]  # a reorg took the first fill away
        world.mine_destination(1)
        await world.repayer.tick()
        (only,) = await world.repayments()
        assert only.deposit_id == world.deposit_ids[1]


async def test_a_chain_failure_ends_the_tick_and_is_retried(world: World) -> None:
    world.destination.fail("receipt", ChainUnreachable("timeout"))
    with pytest.raises(ChainUnreachable):  # the loop backs off
        await world.repayer.tick()
    assert await world.repayments() == [] and await world.journal() == []
    world.origin.fail("simulate", ChainUnreachable("timeout"))
    with pytest.raises(ChainUnreachable):
        await world.repayer.tick()
    recorded = await world.repayments()  # recorded, nothing signed: as after a crash there
    assert [row.state for row in recorded] == ["sending"] * 2 and await world.journal() == []
    await world.repayer.tick()
    (sent,) = await world.journal()
    again = await world.repayments()
    assert [row.batch for row in again] == [sent.purpose] * 2
    assert all(row.payout_id for row in again)


async def test_a_batch_signed_again_is_the_same_payouts(world: World) -> None:
    await world.repayer.tick()
    (first,) = await world.journal()
    signed = [row.payout_id for row in await world.repayments()]
    world.origin.nonces[world.repayer.txmanager.sender] = first.nonce + 1  # nonce taken by hand
    await world.repayer.tick()
    world.base.clock.advance(timedelta(seconds=11))
    await world.repayer.tick()
    taken, again = await world.journal()
    assert (taken.status, again.purpose) == ("conflicted", first.purpose)
    assert [row.payout_id for row in await world.repayments()] == signed


async def test_a_deposit_another_payout_paid_first_is_recorded_and_never_sent(
    world: World,
) -> None:
    async with world.base.sessions() as session:
        first = await session.get(Deposit, world.deposit_ids[0])
    assert first is not None
    world.origin.used.add(payout_nonce(first))
    await world.repayer.tick()
    taken, repaying = await world.repayments()
    assert (taken.state, taken.tx_hash, repaying.state) == ("paid_elsewhere", None, "sending")
    (sent,) = await world.journal()
    world.mine_repayment(sent.tx_hash, [repaying])
    await world.repayer.tick()
    await world.repayer.tick()
    states = [row.state for row in await world.repayments()]
    assert states == ["paid_elsewhere", "repaid"] and len(await world.journal()) == 1


async def test_a_payout_a_mined_batch_did_not_pay_is_sent_again(world: World) -> None:
    await world.repayer.tick()
    (sent,) = await world.journal()
    paid, unpaid = await world.repayments()
    world.mine_repayment(sent.tx_hash, [paid])  # the second payout did not execute
    await world.repayer.tick()
    first, again = await world.journal()
    assert (again.purpose, again.nonce) == (first.purpose, first.nonce + 1)
    rows = await world.repayments()
    assert [row.state for row in rows] == ["repaid", "sending"]
    assert rows[1].payout_id == unpaid.payout_id  # the same payout, sent again
    world.mine_repayment(again.tx_hash, [unpaid])
    await world.repayer.tick()
    assert [(row.state, row.batch_size) for row in await world.repayments()] == [
        ("repaid", 1),
        ("repaid", 1),
    ]
