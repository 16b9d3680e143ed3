"""The gas keeper on the in-memory chain port: a sponsor key below its minimum is topped up
once to its target by a journalled transfer from the solver, never twice across a restart;
the solver's own key low, or a solver with nothing to spare, is shown on the chain's state
and in the metrics; chain failures send nothing and are retried; a revert refuses."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from eth_account.signers.local import LocalAccount
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes
from sqlalchemy import select

from crossfill.contracts.reverts import RevertReason
from crossfill.domain.key_gas import CANNOT_SPARE, REFUSED, SOLVER, SOLVER_LOW, TOP_UPS_OFF
from crossfill.errors import ChainUnreachable, Reverted, SignerBusy
from crossfill.kinds.evm.config import KeyGasConfig
from crossfill.kinds.evm.gas_keeper import GasKeeper, SendingKey, purpose_of
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.store.tables import SentTransaction
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.unit.worker_world import ChainWorld, chain_world

ETHER = 10**18
MINIMUM, TARGET = ETHER, 3 * ETHER
SPONSOR = "0x" + "5b" * 20
ROLE = "gasless-sponsor-0"


@dataclass
class KeeperWorld:
    base: ChainWorld
    account: LocalAccount

    @property
    def solver(self) -> str:
        return self.account.address

    def keeper(self, *, top_up: bool = True, holder: str = "me") -> GasKeeper:
        """A keeper as a process starting now builds it, with its own transaction manager."""
        settings = KeyGasConfig(minimum_wei=MINIMUM, target_wei=TARGET, top_up=top_up)
        config = self.base.config.model_copy(update={"key_gas": settings})
        chain = dataclasses.replace(self.base.runtime, config=config)
        state = self.base.state
        txmanager = TxManager(
            self.base.chain,
            state,
            self.account,
            self.base.sessions,
            now=self.base.clock,
            holder=holder,
            funds=lambda: state.solver_balance(NATIVE_EVM_ADDRESS),
        )
        keys = (SendingKey(SOLVER, self.solver), SendingKey(ROLE, SPONSOR))
        return GasKeeper(
            chain,
            self.base.sessions,
            txmanager,
            keys,
            self.base.metrics,
            now=self.base.clock,
            interval_seconds=0.1,
        )

    def solver_holds(self, wei: int) -> None:
        """The solver's balance, on chain and as the follower last read it."""
        self.base.chain.fund(self.solver, wei)
        self.base.state.solver_balances = {NATIVE_EVM_ADDRESS: wei}

    def mine(self) -> None:
        self.base.chain.mine_block()
        self.base.state.record_head(self.base.chain.head_block, 0.0)
        self.base.state.solver_balances = {
            NATIVE_EVM_ADDRESS: self.base.chain.balances[self.solver.lower()]
        }

    async def top_ups(self) -> list[SentTransaction]:
        async with self.base.sessions() as session:
            rows = await session.scalars(
                select(SentTransaction).where(
                    SentTransaction.purpose == purpose_of(self.base.config.id, SPONSOR)
                )
            )
            return list(rows)

    def gauge(self, name: str, role: str) -> float | None:
        labels = {"chain_id": str(self.base.config.id), "key": role}
        return self.base.metrics.registry.get_sample_value(name, labels)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[KeeperWorld]:
    async with chain_world(tmp_path) as base:
        world = KeeperWorld(base, base.signer())
        world.solver_holds(100 * ETHER)
        base.chain.fund(SPONSOR, ETHER // 10)
        yield world


async def test_a_sponsor_below_its_minimum_is_topped_up_once_to_its_target(
    world: KeeperWorld,
) -> None:
    keeper = world.keeper()
    await keeper.tick()
    (row,) = await world.top_ups()
    sent = TypedTransaction.from_bytes(HexBytes(row.raw_transaction)).as_dict()
    assert bytes(sent["to"]).hex() == SPONSOR[2:] and int(sent["value"]) == TARGET - ETHER // 10
    assert row.request_id is None and world.base.chain.sent == [row.tx_hash]
    assert world.base.state.low_on_gas == ()
    assert world.gauge("crossfill_gas_top_ups_total", ROLE) == 1
    assert world.gauge("crossfill_gas_top_up_wei_total", ROLE) == TARGET - ETHER // 10
    await keeper.tick()  # in flight: nothing more
    await world.keeper().tick()  # a restart finds it in flight in the journal
    assert len(await world.top_ups()) == 1 and len(world.base.chain.sent) == 1
    world.mine()
    assert world.base.chain.balances[SPONSOR] == TARGET
    await keeper.tick()
    restarted = world.keeper()
    await restarted.tick()
    await restarted.tick()
    assert len(await world.top_ups()) == 1 and len(world.base.chain.sent) == 1
    assert world.gauge("crossfill_key_gas_balance", ROLE) == 3.0
    assert world.gauge("crossfill_key_gas_low", ROLE) == 0
    (settled,) = await world.top_ups()
    assert settled.status == "mined"  # followed until mined, the key above its minimum now
    assert keeper.txmanager.available() == world.base.chain.balances[world.solver.lower()]


async def test_a_second_process_leaves_top_ups_to_the_one_signing_and_never_doubles_one(
    world: KeeperWorld,
) -> None:
    await world.keeper().tick()
    other = world.keeper(holder="other")
    with pytest.raises(SignerBusy):
        await other.tick()
    world.base.clock.advance(timedelta(seconds=10))  # the first process's lease lapses
    await other.tick()  # it signs now, and finds the top-up in flight in the journal
    assert len(await world.top_ups()) == 1 and len(world.base.chain.sent) == 1


async def test_a_process_not_signing_still_shows_the_solver_low(world: KeeperWorld) -> None:
    await world.keeper().tick()  # holds the lease
    world.solver_holds(MINIMUM - 1)
    world.base.chain.fund(SPONSOR, 0)
    with pytest.raises(SignerBusy):
        await world.keeper(holder="other").tick()
    assert [entry.key.role for entry in world.base.state.low_on_gas] == [SOLVER]


async def test_a_top_up_mined_after_the_block_read_waits_for_a_newer_read(
    world: KeeperWorld,
) -> None:
    keeper = world.keeper()
    await keeper.tick()
    world.base.chain.mine_block()  # mined, but the keeper's head is still the block before
    world.base.chain.fund(SPONSOR, ETHER // 10)  # as an older block would show it
    await world.keeper().tick()
    assert len(await world.top_ups()) == 1


async def test_a_key_low_again_later_is_topped_up_again(world: KeeperWorld) -> None:
    keeper = world.keeper()
    await keeper.tick()
    world.mine()
    world.base.chain.fund(SPONSOR, ETHER // 2)  # spent since
    await keeper.tick()
    first, second = sorted(await world.top_ups(), key=lambda row: row.nonce)
    sent = TypedTransaction.from_bytes(HexBytes(second.raw_transaction)).as_dict()
    assert int(sent["value"]) == TARGET - ETHER // 2 and second.nonce == first.nonce + 1


async def test_never_more_than_the_solver_can_spare_and_else_the_key_shows_low(
    world: KeeperWorld,
) -> None:
    world.solver_holds(MINIMUM + ETHER // 2)  # spare: half an ether, not enough to lift it
    await world.keeper().tick()
    assert await world.top_ups() == [] and world.base.chain.sent == []
    ((low,),) = [world.base.state.low_on_gas]
    assert (low.key.role, low.reason) == (ROLE, CANNOT_SPARE)
    assert world.gauge("crossfill_key_gas_low", ROLE) == 1
    world.solver_holds(MINIMUM + 2 * ETHER)  # enough to lift it, not to the target
    await world.keeper().tick()
    (row,) = await world.top_ups()
    value = int(TypedTransaction.from_bytes(HexBytes(row.raw_transaction)).as_dict()["value"])
    assert MINIMUM <= ETHER // 10 + value < TARGET
    fee = world.base.state.offered_fees()[0]
    assert value == 2 * ETHER - 21_000 * fee


async def test_nothing_is_spared_while_fills_wait_on_the_solver(world: KeeperWorld) -> None:
    world.base.state.solver_shortfall = {NATIVE_EVM_ADDRESS: 1}
    await world.keeper().tick()
    assert await world.top_ups() == []
    assert [entry.reason for entry in world.base.state.low_on_gas] == [CANNOT_SPARE]


async def test_the_solvers_own_key_low_is_shown_not_topped_up(world: KeeperWorld) -> None:
    world.solver_holds(MINIMUM - 1)
    world.base.chain.fund(SPONSOR, TARGET)
    await world.keeper().tick()
    ((low,),) = [world.base.state.low_on_gas]
    assert (low.key.role, low.reason, low.minimum) == (SOLVER, SOLVER_LOW, MINIMUM)
    assert world.base.chain.sent == []
    assert world.gauge("crossfill_key_gas_low", SOLVER) == 1
    assert world.gauge("crossfill_key_gas_minimum", SOLVER) == 1.0
    world.solver_holds(MINIMUM)
    await world.keeper().tick()
    assert world.base.state.low_on_gas == ()
    assert world.gauge("crossfill_key_gas_low", SOLVER) == 0


async def test_top_ups_off_shows_the_key_low(world: KeeperWorld) -> None:
    await world.keeper(top_up=False).tick()
    assert await world.top_ups() == []
    assert [entry.reason for entry in world.base.state.low_on_gas] == [TOP_UPS_OFF]


@pytest.mark.parametrize("method", ["native_balances", "estimate_gas", "pending_nonce"])
async def test_a_chain_failure_sends_nothing_twice_and_is_retried(
    world: KeeperWorld, method: str
) -> None:
    world.base.chain.fail(method, ChainUnreachable("node down"))
    keeper = world.keeper()
    with pytest.raises(ChainUnreachable):
        await keeper.tick()  # the loop backs off and ticks again
    await keeper.tick()
    journal = await world.top_ups()
    assert len(journal) == 1
    assert world.base.chain.sent == [journal[0].tx_hash]


async def test_a_broadcast_that_failed_is_sent_again_from_the_journal_never_signed_again(
    world: KeeperWorld,
) -> None:
    world.base.chain.fail("send_raw", ChainUnreachable("node down"))
    keeper = world.keeper()
    with pytest.raises(ChainUnreachable):
        await keeper.tick()
    await keeper.tick()
    await world.keeper().tick()
    (row,) = await world.top_ups()
    assert world.base.chain.sent == []
    # the solver key's own pass over its journal (the solver's tick) sends the same bytes
    world.base.clock.advance(timedelta(seconds=5))
    await keeper.txmanager.replace_stuck(timedelta(minutes=1))
    assert world.base.chain.sent == [row.tx_hash]
    assert len(await world.top_ups()) == 1


async def test_a_revert_of_the_transfer_refuses_the_top_up_and_shows_the_key(
    world: KeeperWorld,
) -> None:
    reason = RevertReason("Error", ("no ether here",))
    world.base.chain.fail("estimate_gas", Reverted("execution reverted", data=b"", reason=reason))
    keeper = world.keeper()
    await keeper.tick()
    await keeper.tick()
    assert await world.top_ups() == [] and world.base.chain.sent == []
    assert [entry.reason for entry in world.base.state.low_on_gas] == [REFUSED]
