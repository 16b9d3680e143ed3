"""The refunder on the in-memory chain port: a failed request's deposit is paid back once; a
chain failure sends nothing and is tried again; a refund whose broadcast answer was lost is
resumed from the journal, never signed twice."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from eth_account import Account
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes
from sqlalchemy import insert, select, update

from crossfill.contracts.reverts import RevertReason
from crossfill.domain.call_request import NONCE_ALREADY_USED
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.errors import ChainUnreachable, RateLimited, Reverted
from crossfill.kinds.evm.client import TransactionFacts
from crossfill.kinds.evm.depository_logs import RECEIVER
from crossfill.kinds.evm.refunder import Refunder
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.quoting.money import from_usd_micros_ceil
from crossfill.quoting.prices import price_on_chain
from crossfill.store import deposits, requests
from crossfill.store.tables import Deposit, Request, SentTransaction
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.synthetic import synthetic_requests
from tests.unit.fake_chain import FakeChain
from tests.unit.foreign_nonce import signed_again_after_a_foreign_nonce
from tests.unit.receipt_logs import call_executed_log
from tests.unit.worker_world import START, ChainWorld, chain_world

DEPOSITED = 10**17


@dataclass
class World:
    base: ChainWorld
    refunder: Refunder
    request_id: str

    @property
    def chain(self) -> FakeChain:
        return self.base.chain

    async def rows(self) -> tuple[Request, Deposit, list[SentTransaction]]:
        async with self.base.sessions() as session:
            request = await session.get(Request, self.request_id)
            deposit = await session.scalar(select(Deposit))
            journal = list(await session.scalars(select(SentTransaction)))
        assert request is not None and deposit is not None
        return request, deposit, journal


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        txmanager = TxManager(
            base.chain, base.state, base.signer(), base.sessions, now=base.clock, holder="me"
        )
        refunder = Refunder(
            base.runtime,
            base.sessions,
            txmanager,
            Account.create(),
            now=base.clock,
            interval_seconds=0.1,
        )
        (row,) = synthetic_requests(1, start=START).requests
        row.update(
            status="failure",
            fail_reason="DEPOSITED_AMOUNT_TOO_LOW_TO_FILL",
            refund_fail_reason=None,
            origin_chain_id=base.config.id,
            origin_currency=NATIVE_EVM_ADDRESS,
            refund_to="0x" + "5a" * 20,
        )
        deposit = {
            "chain_id": base.config.id,
            "tx_hash": "0x" + "de" * 32,
            "log_index": 0,
            "block_number": 90,
            "block_hash": "0x" + "be" * 32,
            "order_id": row["order_id"],
            "depositor": row["user_address"],
            "currency": NATIVE_EVM_ADDRESS,
            "amount": str(DEPOSITED),
            "state": deposits.CONFIRMED,
            "request_id": row["id"],
            "created_at": START,
        }
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), [row])
            await connection.execute(insert(Deposit), [deposit])
        yield World(base, refunder, row["id"])


async def test_a_failed_requests_deposit_is_refunded_once(world: World) -> None:
    await world.refunder.tick()
    _, deposit, (refund,) = await world.rows()
    assert deposit.refund_status == "submitted" and world.chain.sent == [refund.tx_hash]
    assert 0 < int(deposit.refund_amount or 0) < DEPOSITED
    world.chain.mine(refund.tx_hash)
    await world.refunder.tick()
    await world.refunder.tick()
    request, deposit, journal = await world.rows()
    assert (request.status, deposit.refund_status) == ("refund", "done")
    assert len(journal) == 1 and len(world.chain.sent) == 1


async def test_a_mined_refund_records_its_fee_time_and_the_amount_paid_back(
    world: World,
) -> None:
    await world.refunder.tick()
    request, deposit, (refund,) = await world.rows()
    net = int(deposit.refund_amount or 0)
    depository = world.base.config.contracts.depository
    world.chain.mine(
        refund.tx_hash,
        logs=[call_executed_log(depository, request.refund_to, b"", net)],
    )
    await world.refunder.tick()
    async with world.base.sessions() as session:
        (recorded,) = await requests.transactions_of(session, world.request_id)
    assert (recorded.kind, recorded.tx_hash, recorded.status) == (
        "refund",
        refund.tx_hash,
        "success",
    )
    assert recorded.fee == str(50_000 * 2)  # the fake receipt's gas used times its gas price
    assert recorded.timestamp == world.chain.head_block.timestamp
    assert (recorded.amount, recorded.currency) == (str(net), NATIVE_EVM_ADDRESS)


@pytest.mark.parametrize(
    "outcome",
    [ChainUnreachable("timeout"), RateLimited("429", retry_after_seconds=None)],
    ids=["unreachable", "rate-limited"],
)
async def test_a_chain_failure_while_simulating_sends_nothing_and_is_retried(
    world: World, outcome: Exception
) -> None:
    world.chain.fail("estimate_gas", outcome)
    await world.refunder.tick()
    request, deposit, journal = await world.rows()
    assert request.status == "failure" and deposit.refund_status is None and journal == []
    await world.refunder.tick()
    _, deposit, journal = await world.rows()
    assert deposit.refund_status == "submitted" and len(journal) == 1


async def test_a_lost_refund_answer_is_resumed_from_the_journal(world: World) -> None:
    world.chain.fail("send_raw_after_taking", ChainUnreachable("connection reset"))
    await world.refunder.tick()
    _, deposit, (journalled,) = await world.rows()
    assert deposit.refund_status is None and world.chain.sent == [journalled.tx_hash]
    world.base.clock.advance(timedelta(seconds=1))
    await world.refunder.tick()
    _, deposit, journal = await world.rows()
    assert deposit.refund_status == "submitted" and len(journal) == 1
    assert world.chain.sent == [journalled.tx_hash]


async def test_a_payout_already_executed_for_the_deposit_settles_it_without_sending(
    world: World,
) -> None:
    """Someone sent a payout signed for this deposit earlier: the Depository refuses its nonce
    again, so the deposit is refunded already and nothing more is sent."""
    used = Reverted(
        "execution reverted",
        data=b"",
        reason=RevertReason(NONCE_ALREADY_USED, (1,)),
    )
    world.chain.fail("estimate_gas", used)
    await world.refunder.tick()
    request, deposit, journal = await world.rows()
    assert (request.status, deposit.refund_status) == ("refund", "done")
    assert journal == [] and world.chain.sent == []


async def _paid_to_solver(world: World) -> None:
    """The deposit went through the Receiver to the solver (protocol v1)."""
    async with world.base.engine.begin() as connection:
        await connection.execute(update(Deposit).values(paid_to=RECEIVER))


async def test_a_deposit_paid_to_the_solver_is_sent_back_by_the_solver_once(
    world: World,
) -> None:
    await _paid_to_solver(world)
    await world.refunder.tick()
    request, deposit, (refund,) = await world.rows()
    sent = TypedTransaction.from_bytes(HexBytes(refund.raw_transaction)).as_dict()
    net = int(deposit.refund_amount or 0)
    assert 0 < net < DEPOSITED and deposit.refund_status == "submitted"
    # A plain transfer from the solver's own inventory: no Depository, no allocator.
    assert ("0x" + bytes(sent["to"]).hex(), sent["value"], bytes(sent["data"])) == (
        request.refund_to,
        net,
        b"",
    )
    assert refund.sender == world.refunder.txmanager.account.address.lower()
    world.chain.sent_facts[refund.tx_hash] = TransactionFacts(
        refund.sender, request.refund_to, net, b""
    )
    world.chain.mine(refund.tx_hash)
    await world.refunder.tick()
    await world.refunder.tick()
    request, deposit, journal = await world.rows()
    assert (request.status, deposit.refund_status) == ("refund", "done")
    assert len(journal) == 1 and world.chain.sent == [refund.tx_hash]
    async with world.base.sessions() as session:
        (recorded,) = await requests.transactions_of(session, world.request_id)
    assert (recorded.kind, recorded.amount, recorded.fee) == ("refund", str(net), str(100_000))


async def test_a_solver_refund_whose_answer_was_lost_is_resumed_not_sent_twice(
    world: World,
) -> None:
    await _paid_to_solver(world)
    world.chain.fail("send_raw_after_taking", ChainUnreachable("connection reset"))
    await world.refunder.tick()
    _, deposit, (journalled,) = await world.rows()
    assert deposit.refund_status is None and world.chain.sent == [journalled.tx_hash]
    world.base.clock.advance(timedelta(seconds=1))
    await world.refunder.tick()
    _, deposit, journal = await world.rows()
    assert deposit.refund_status == "submitted" and len(journal) == 1
    assert world.chain.sent == [journalled.tx_hash]


async def test_a_refund_whose_nonce_another_transaction_took_is_signed_again(
    world: World,
) -> None:
    await world.refunder.tick()

    async def journal() -> list[SentTransaction]:
        return (await world.rows())[2]

    again = await signed_again_after_a_foreign_nonce(
        world.chain,
        world.base.clock,
        world.refunder.txmanager.sender,
        world.refunder.tick,
        journal,
    )
    _, deposit, _ = await world.rows()
    assert (deposit.refund_status, deposit.refund_tx_hash) == ("submitted", again.tx_hash)
    world.chain.mine(again.tx_hash)
    await world.refunder.tick()
    request, deposit, _ = await world.rows()
    assert (request.status, deposit.refund_status) == ("refund", "done")


async def test_a_refund_keeps_the_gas_of_the_orders_reverted_fill(world: World) -> None:
    """The fill was simulated without a revert, then reverted in its block (a destination
    call its caller flipped): its gas, valued when it was mined, is kept from the refund
    besides the refund's own."""
    fill_usd = 250_000  # $0.25
    native = world.base.config.native_currency.model_copy(update={"usd_price": Decimal(3000)})
    world.refunder.chain = replace(
        world.refunder.chain,
        config=world.base.config.model_copy(update={"native_currency": native}),
    )
    async with world.base.sessions() as session, session.begin():
        await session.execute(update(Deposit).values(outcome=DepositVerdict.ACCEPTED))
        await requests.record_transaction(
            session,
            world.request_id,
            kind="fill",
            chain_id=world.base.config.id,
            tx_hash="0x" + "f1" * 32,
            status="failure",
            now=START,
            fee=10**14,
            fee_usd_micros=fill_usd,
        )
    await world.refunder.tick()
    _, deposit, _ = await world.rows()
    config, state = world.refunder.config, world.base.state
    fee = state.fee_per_gas(config.fees.base_fee_buffer_percent)
    price = price_on_chain(config, state, config.native_currency, int(START.timestamp()))
    assert fee is not None and price is not None
    refund_gas = config.fees.refund_gas_native * fee
    fill_gas = from_usd_micros_ceil(fill_usd, 18, price)
    assert int(deposit.refund_amount or 0) == DEPOSITED - refund_gas - fill_gas
