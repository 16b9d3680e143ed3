"""The deposit-address sweeper on the in-memory chain port: a transfer to a watched address is
recorded once, names its depositor, and is swept once (journalled) for the request it pays; a
later transfer makes a child request with a sweep of its own; a sweep the chain refuses sends
nothing; a restarted sweeper resumes from the journal instead of sending again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes
from sqlalchemy import delete, insert, select

from crossfill.contracts.deposit_addresses import Sweep
from crossfill.contracts.reverts import RevertReason
from crossfill.errors import ChainError, ChainUnreachable, NodeBehind, Reverted
from crossfill.kinds.evm.client import InternalTransfer, ValueTransfer
from crossfill.kinds.evm.deposit_addresses import (
    UNTRACED_GIVE_UP,
    UNTRACED_TRIES,
    DepositAddressSweeper,
)
from crossfill.kinds.evm.depository_logs import address_topic, erc20_transfer_event
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.store.address_transfers import ROLE, TRACES_ROLE
from crossfill.store.tables import AddressTransfer, ChainCursor, Request, SentTransaction
from crossfill.types import NATIVE_EVM_ADDRESS, TraceApi
from tests.support.synthetic import synthetic_requests
from tests.unit.fake_chain import FakeChain
from tests.unit.foreign_nonce import signed_again_after_a_foreign_nonce
from tests.unit.worker_world import START, ChainWorld, chain_world

FACTORY = "0x" + "fa" * 20
ADDRESS = "0x" + "da" * 20
PAYER = "0x" + "5b" * 20
AMOUNT = 10**17
BLOCK = 50  # deep enough under the sample chain's head (100) for any value


@dataclass
class World:
    base: ChainWorld
    sweeper: DepositAddressSweeper
    txmanager: TxManager
    request: dict[str, object]

    @property
    def chain(self) -> FakeChain:
        return self.base.chain

    def restarted(self) -> DepositAddressSweeper:
        """Another sweeper on the same database and chain, as after a kill -9."""
        return DepositAddressSweeper(
            self.sweeper.chain,
            self.base.sessions,
            self.txmanager,
            now=self.base.clock,
            interval_seconds=0.1,
        )

    async def rows(self) -> tuple[list[AddressTransfer], list[SentTransaction], list[Request]]:
        async with self.base.sessions() as session:
            transfers = list(await session.scalars(select(AddressTransfer)))
            journal = list(await session.scalars(select(SentTransaction)))
            requests = list(await session.scalars(select(Request).order_by(Request.created_at)))
        return transfers, journal, requests

    async def pay_ether(self, tx_hash: str, block: int = BLOCK) -> None:
        head = await self.chain.block_at(block)
        assert head is not None
        paid = ValueTransfer(tx_hash=tx_hash, sender=PAYER, to=ADDRESS, value=AMOUNT, block=head)
        self.chain.ether_transfers.setdefault(block, []).append(paid)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        contracts = base.config.contracts.model_copy(update={"deposit_address_factory": FACTORY})
        config = base.config.model_copy(update={"contracts": contracts})
        runtime = replace(base.runtime, config=config)
        solver = base.signer()
        txmanager = TxManager(
            base.chain, base.state, solver, base.sessions, now=base.clock, holder="me"
        )
        sweeper = DepositAddressSweeper(
            runtime, base.sessions, txmanager, now=base.clock, interval_seconds=0.1
        )
        (row,) = synthetic_requests(1, start=START).requests
        row.update(
            status="waiting",
            origin_chain_id=config.id,
            origin_currency=NATIVE_EVM_ADDRESS,
            amount_in=str(AMOUNT),
            created_at=START,
            deposit_address=ADDRESS,
            deposit_address_type="strict",
            deposit_address_key=row["order_id"],
        )
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), [row])
        yield World(base, sweeper, txmanager, row)


def _sent_calldata(sent: SentTransaction) -> bytes:
    return bytes(TypedTransaction.from_bytes(HexBytes(sent.raw_transaction)).as_dict()["data"])


async def test_an_ether_transfer_is_swept_once_for_the_quoted_request(world: World) -> None:
    await world.pay_ether("0x" + "e1" * 32)
    await world.sweeper.tick()
    (transfer,), (sweep,), (request,) = await world.rows()
    assert (transfer.depositor, transfer.amount, transfer.log_index) == (PAYER, str(AMOUNT), -1)
    assert transfer.request_id == request.id == world.request["id"]
    assert (request.depositor, request.deposit_tx_hash) == (PAYER, "0x" + "e1" * 32)
    assert sweep.purpose == "sweep" and sweep.request_id == request.id
    expected = Sweep(
        key=bytes.fromhex(request.order_id[2:]),
        recovery_address=None,
        currency=NATIVE_EVM_ADDRESS,
        amount=AMOUNT,
        depositor=PAYER,
        order_id=bytes.fromhex(request.order_id[2:]),
    )
    assert _sent_calldata(sweep) == expected.calldata()
    await world.sweeper.tick()  # sent, not mined: nothing new
    world.chain.mine(sweep.tx_hash)
    await world.sweeper.tick()
    (transfer,), journal, _ = await world.rows()
    assert transfer.state == "swept" and len(journal) == 1
    assert world.chain.sent == [sweep.tx_hash]


async def test_a_second_transfer_is_a_child_request_swept_on_its_own(world: World) -> None:
    await world.pay_ether("0x" + "e1" * 32)
    token = world.base.config.erc20_currencies[0].address.lower()
    log = {
        "address": token,
        "topics": [erc20_transfer_event().topic, address_topic(PAYER), address_topic(ADDRESS)],
        "data": "0x" + (5 * 10**6).to_bytes(32, "big").hex(),
        "transactionHash": "0x" + "e2" * 32,
        "logIndex": 3,
        "blockNumber": BLOCK + 1,
        "blockHash": (await world.chain.block_at(BLOCK + 1) or world.chain.head_block).hash,
    }
    world.chain.logs[BLOCK + 1] = [log]
    await world.sweeper.tick()
    transfers, journal, requests = await world.rows()
    (parent,) = [row for row in requests if row.id == world.request["id"]]
    (child,) = [row for row in requests if row.id != parent.id]
    assert child.parent_request_id == parent.id and child.order_id != parent.order_id
    assert child.deposit_address == ADDRESS and child.status == "waiting"
    by_tx = {transfer.tx_hash: transfer for transfer in transfers}
    assert by_tx["0x" + "e2" * 32].request_id == child.id
    assert (child.depositor, child.deposit_tx_hash) == (PAYER, "0x" + "e2" * 32)
    assert {row.request_id for row in journal} == {parent.id, child.id}
    (child_sweep,) = [row for row in journal if row.request_id == child.id]
    assert (
        _sent_calldata(child_sweep)
        == Sweep(
            key=bytes.fromhex(parent.order_id[2:]),  # the parent's address
            recovery_address=None,
            currency=token,
            amount=5 * 10**6,
            depositor=PAYER,
            order_id=bytes.fromhex(child.order_id[2:]),  # the child's order
        ).calldata()
    )


async def test_a_sweep_the_chain_refuses_sends_nothing(world: World) -> None:
    await world.pay_ether("0x" + "e1" * 32)
    reason = RevertReason("NativeTransferFailed", (ADDRESS,))
    world.chain.fail("estimate_gas", Reverted("reverted", data=b"\x01", reason=reason))
    await world.sweeper.tick()
    (transfer,), journal, _ = await world.rows()
    assert transfer.state == "failed" and journal == [] and world.chain.sent == []


async def test_a_restarted_sweeper_resumes_from_the_journal(world: World) -> None:
    await world.pay_ether("0x" + "e1" * 32)
    await world.sweeper.tick()
    _, (sweep,), _ = await world.rows()
    restarted = world.restarted()
    await restarted.tick()
    await restarted.tick()
    _, journal, _ = await world.rows()
    assert len(journal) == 1 and world.chain.sent == [sweep.tx_hash]
    world.chain.mine(sweep.tx_hash)
    await restarted.tick()
    (transfer,), _, _ = await world.rows()
    assert transfer.state == "swept"


def _swept_amounts(journal: list[SentTransaction]) -> dict[str | None, int]:
    """Each sweep's amount by request: sweep(key, recoveryAddress, token, amount, ...), the
    fourth word of its calldata."""
    return {
        row.request_id: int.from_bytes(_sent_calldata(row)[4 + 32 * 3 : 4 + 32 * 4])
        for row in journal
    }


# More than the sweep's gas on the sample chain (110,000 gas at 2 wei), and far less than a fill.
EXCESS = 10**15


async def test_an_overpaid_transfer_sweeps_the_quote_and_refunds_the_excess(world: World) -> None:
    head = await world.chain.block_at(BLOCK)
    assert head is not None
    paid = ValueTransfer("0x" + "e3" * 32, PAYER, ADDRESS, AMOUNT + EXCESS, head)
    world.chain.ether_transfers[BLOCK] = [paid]
    await world.sweeper.tick()
    await world.sweeper.tick()  # the excess leg, made by the first tick
    transfers, journal, requests = await world.rows()
    legs = {transfer.leg: transfer for transfer in transfers}
    assert (legs["paid"].amount, legs["excess"].amount) == (str(AMOUNT), str(EXCESS))
    (child,) = [row for row in requests if row.id != world.request["id"]]
    assert (child.status, child.fail_reason) == ("failure", "INCORRECT_PAYMENT")
    assert child.refund_fail_reason is None  # the refunder pays it back
    assert legs["excess"].request_id == child.id
    assert _swept_amounts(journal) == {world.request["id"]: AMOUNT, child.id: EXCESS}


def _dust_count(world: World) -> float | None:
    labels = {"chain_id": str(world.base.config.id)}
    return world.sweeper.metrics.registry.get_sample_value(
        "crossfill_deposit_address_dust_total", labels
    )


async def test_dust_is_recorded_and_left_and_the_payment_after_it_pays_the_quote(
    world: World,
) -> None:
    """Two one-wei transfers, then the real payment: the dust is never swept (each is a child
    request failed too low to refund, counted), nor names its sender on the quoted request,
    which the real payment pays and sweeps."""
    head = await world.chain.block_at(BLOCK)
    assert head is not None
    dust = ["0x" + digits * 32 for digits in ("d1", "d2")]
    world.chain.ether_transfers[BLOCK] = [
        ValueTransfer(tx_hash, "0x" + "66" * 20, ADDRESS, 1, head) for tx_hash in dust
    ]
    await world.sweeper.tick()
    transfers, journal, requests = await world.rows()
    assert journal == [] and {t.state for t in transfers} == {"too_small"}
    (parent,) = [row for row in requests if row.id == world.request["id"]]
    assert (parent.status, parent.depositor) == ("waiting", None)
    children = {row.deposit_tx_hash: row for row in requests if row.id != parent.id}
    assert set(children) == set(dust)
    for child in children.values():
        assert (child.status, child.fail_reason, child.refund_fail_reason) == (
            "failure",
            "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL",
            "AMOUNT_TOO_LOW_TO_REFUND",
        )
    assert {t.request_id for t in transfers} == {child.id for child in children.values()}
    assert _dust_count(world) == 2

    later = world.chain.push_head().number  # past the first scan, deep enough at the head
    for _ in range(BLOCK):
        world.chain.push_head()
    await world.pay_ether("0x" + "e1" * 32, block=later)
    await world.sweeper.tick()
    transfers, journal, requests = await world.rows()
    (paid,) = [t for t in transfers if t.state == "seen"]
    assert paid.request_id == parent.id
    assert _swept_amounts(journal) == {parent.id: AMOUNT}
    (parent,) = [row for row in requests if row.id == parent.id]
    assert (parent.depositor, parent.deposit_tx_hash) == (PAYER, "0x" + "e1" * 32)


async def test_an_excess_too_small_to_sweep_is_left_at_the_address(world: World) -> None:
    head = await world.chain.block_at(BLOCK)
    assert head is not None
    paid = ValueTransfer("0x" + "e3" * 32, PAYER, ADDRESS, AMOUNT + 7, head)
    world.chain.ether_transfers[BLOCK] = [paid]
    await world.sweeper.tick()
    await world.sweeper.tick()
    transfers, journal, requests = await world.rows()
    legs = {transfer.leg: transfer for transfer in transfers}
    assert (legs["excess"].amount, legs["excess"].state) == ("7", "too_small")
    (child,) = [row for row in requests if row.id != world.request["id"]]
    assert (child.status, child.fail_reason, child.refund_fail_reason) == (
        "failure",
        "INCORRECT_PAYMENT",
        "AMOUNT_TOO_LOW_TO_REFUND",
    )
    assert _swept_amounts(journal) == {world.request["id"]: AMOUNT}
    assert _dust_count(world) == 1


async def test_a_reorged_cursor_rewinds_and_finds_what_the_new_blocks_hold(world: World) -> None:
    await world.sweeper.tick()  # nothing paid yet: the cursor moves on
    async with world.base.sessions() as session, session.begin():
        cursor = await session.get(ChainCursor, (world.base.config.id, "deposit_addresses"))
        assert cursor is not None and cursor.block_number == 99
        cursor.block_hash = "0x" + "0b" * 32  # that block was replaced
    await world.pay_ether("0x" + "e4" * 32, block=40)  # in a block the new chain holds
    await world.sweeper.tick()
    (transfer,), (sweep,), _ = await world.rows()
    assert transfer.tx_hash == "0x" + "e4" * 32 and sweep.request_id == world.request["id"]


def _traced(world: World, traces: TraceApi) -> DepositAddressSweeper:
    """The world's sweeper on a chain whose RPC serves `traces`."""
    config = world.sweeper.chain.config.model_copy(update={"trace_internal_transfers": traces})
    return DepositAddressSweeper(
        replace(world.sweeper.chain, config=config),
        world.base.sessions,
        world.txmanager,
        now=world.base.clock,
        interval_seconds=0.1,
    )


async def _cursor_blocks(world: World) -> dict[str, int]:
    async with world.base.sessions() as session:
        return {row.role: row.block_number for row in await session.scalars(select(ChainCursor))}


@pytest.mark.parametrize("traces", list(TraceApi))
async def test_ether_a_contract_paid_is_read_only_where_the_chain_has_traces(
    world: World, traces: TraceApi
) -> None:
    head = await world.chain.block_at(BLOCK)
    assert head is not None
    world.chain.internal_payments.append(
        InternalTransfer("0x" + "e3" * 32, PAYER, ADDRESS, AMOUNT, BLOCK, head.hash, ordinal=2)
    )
    await world.sweeper.tick()  # the chain's default: no traces asked for, nothing seen
    assert "internal_transfers" not in world.chain.calls
    assert (await world.rows())[0] == []

    traced = _traced(world, traces)
    await traced.traces_tick()  # the traces' own loop and cursor
    await traced.tick()  # swept as any transfer
    (transfer,), (sweep,), _ = await world.rows()
    assert (transfer.tx_hash, transfer.log_index) == ("0x" + "e3" * 32, -4)
    assert (transfer.depositor, transfer.amount) == (PAYER, str(AMOUNT))
    assert sweep.purpose == "sweep"
    assert world.chain.traces_read == [traces]  # the kind the chain's RPC serves
    assert set(await _cursor_blocks(world)) == {ROLE, TRACES_ROLE}


async def test_a_trace_read_that_fails_holds_its_own_cursor_only(world: World) -> None:
    """The node unreachable, behind, or unable to give a transaction's traces: the traces'
    loop fails and its cursor stays, while plain transfers are still found and swept; the
    next trace read that succeeds finds the payment."""
    head = await world.chain.block_at(BLOCK)
    assert head is not None
    world.chain.internal_payments.append(
        InternalTransfer("0x" + "e4" * 32, PAYER, ADDRESS, AMOUNT, BLOCK, head.hash, ordinal=1)
    )
    traced = _traced(world, TraceApi.GETH)
    await world.pay_ether("0x" + "e5" * 32)
    for failure in (
        ChainUnreachable("chain 1: node unreachable: 503"),
        NodeBehind("the node answering has not reached block 100", block_number=100),
        ChainError("chain 1: transaction 0xe6... of block 40 was not traced: execution timeout"),
    ):
        world.chain.fail("internal_transfers", failure)
        with pytest.raises(ChainError):
            await traced.traces_tick()
        await traced.tick()
        assert TRACES_ROLE not in await _cursor_blocks(world)
    (plain,), (sweep,), _ = await world.rows()
    assert plain.tx_hash == "0x" + "e5" * 32 and sweep.purpose == "sweep"
    await traced.traces_tick()
    transfers, _, _ = await world.rows()
    assert {(t.tx_hash, t.log_index) for t in transfers} == {
        ("0x" + "e5" * 32, -1),
        ("0x" + "e4" * 32, -3),
    }
    assert TRACES_ROLE in await _cursor_blocks(world)


@pytest.mark.parametrize("tries_before_the_wait", [1, UNTRACED_TRIES])
async def test_a_transaction_the_node_cannot_trace_holds_the_read_then_is_passed_over(
    world: World, tries_before_the_wait: int
) -> None:
    """Anyone can make one transaction's traces more than a node gives in time: that read is
    tried again, its cursor waiting, until the transaction has failed ten times and over half
    an hour (either alone is not enough); then it is passed over (logged as an error) and the
    payments beside it are found."""
    head = await world.chain.block_at(BLOCK)
    assert head is not None
    world.chain.internal_payments.append(
        InternalTransfer("0x" + "e7" * 32, PAYER, ADDRESS, AMOUNT, BLOCK, head.hash, ordinal=1)
    )
    world.chain.untraced["0x" + "e8" * 32] = BLOCK
    traced = _traced(world, TraceApi.GETH)
    held_tries = [tries_before_the_wait, max(0, UNTRACED_TRIES - tries_before_the_wait - 1)]
    for held in held_tries:
        for _ in range(held):
            with pytest.raises(ChainError, match="could not give the traces"):
                await traced.traces_tick()
        assert TRACES_ROLE not in await _cursor_blocks(world)
        assert (await world.rows())[0] == []
        world.base.clock.advance(UNTRACED_GIVE_UP)
    await traced.traces_tick()  # passed over
    (transfer,), _, _ = await world.rows()
    assert transfer.tx_hash == "0x" + "e7" * 32
    assert TRACES_ROLE in await _cursor_blocks(world)
    labels = {"chain_id": str(world.base.config.id)}
    passed_over = "crossfill_traces_passed_over_total"
    assert traced.metrics.registry.get_sample_value(passed_over, labels) == 1


async def test_a_restart_reads_the_traces_again_from_their_cursor_and_records_each_once(
    world: World,
) -> None:
    """A process killed after a failed trace read, or after a good one, starts over from the
    cursor it committed: the payment is recorded once, however many times it is read."""
    head = await world.chain.block_at(BLOCK)
    assert head is not None
    world.chain.internal_payments.append(
        InternalTransfer("0x" + "ea" * 32, PAYER, ADDRESS, AMOUNT, BLOCK, head.hash, ordinal=1)
    )
    world.chain.fail("internal_transfers", ChainUnreachable("chain 1: node unreachable: 502"))
    with pytest.raises(ChainError):
        await _traced(world, TraceApi.PARITY).traces_tick()
    await _traced(world, TraceApi.PARITY).traces_tick()  # the next process
    async with world.base.sessions() as session, session.begin():
        await session.execute(delete(ChainCursor))  # read the same blocks once more
    await _traced(world, TraceApi.PARITY).traces_tick()
    (transfer,), _, _ = await world.rows()
    assert (transfer.tx_hash, transfer.log_index) == ("0x" + "ea" * 32, -3)


async def test_a_sweep_whose_nonce_another_transaction_took_is_signed_again(
    world: World,
) -> None:
    await world.pay_ether("0x" + "e1" * 32)
    await world.sweeper.tick()

    async def journal() -> list[SentTransaction]:
        return (await world.rows())[1]

    again = await signed_again_after_a_foreign_nonce(
        world.chain, world.base.clock, world.txmanager.sender, world.sweeper.tick, journal
    )
    world.chain.mine(again.tx_hash)
    await world.sweeper.tick()
    (transfer,), _, _ = await world.rows()
    assert transfer.state == "swept"
