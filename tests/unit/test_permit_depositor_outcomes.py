"""The permit depositor on the in-memory chain port: a signed authorization is sent once as
`Depository.depositErc20WithAuthorization`; only the chain's revert, or its expiry, fails it;
a chain failure sends nothing and is tried again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from bench.synthetic import synthetic_requests
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes
from sqlalchemy import insert, select

from crossfill.contracts import calldata
from crossfill.contracts.reverts import RevertReason
from crossfill.errors import ChainUnreachable, Reverted
from crossfill.store.tables import PermitDeposit, Request, SentTransaction
from crossfill.workers.permit_depositor import PermitDepositor
from crossfill.workers.txmanager import TxManager
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import START, ChainWorld, chain_world

TOKEN = "0x" + "c0" * 20
USER = "0x" + "5b" * 20
AMOUNT = 25_000_000
ORDER_ID = "0x" + "0d" * 32
SIGNATURE = "0x" + "51" * 65
VALID_BEFORE = int((START + timedelta(minutes=10)).timestamp())


@dataclass
class World:
    base: ChainWorld
    depositor: PermitDepositor
    request_id: str

    @property
    def chain(self) -> FakeChain:
        return self.base.chain

    async def rows(self) -> tuple[PermitDeposit, list[SentTransaction]]:
        async with self.base.sessions() as session:
            permit = await session.get(PermitDeposit, self.request_id)
            journal = list(await session.scalars(select(SentTransaction)))
        assert permit is not None
        return permit, journal


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        solver: LocalAccount = Account.create()
        txmanager = TxManager(
            base.chain, base.state, solver, base.sessions, now=base.clock, holder="me"
        )
        depositor = PermitDepositor(
            base.runtime, base.sessions, txmanager, now=base.clock, interval_seconds=0.1
        )
        (row,) = synthetic_requests(1, start=START).requests
        row.update(status="waiting", origin_chain_id=base.config.id)
        permit = {
            "request_id": row["id"],
            "chain_id": base.config.id,
            "order_id": ORDER_ID,
            "depositor": USER,
            "currency": TOKEN,
            "amount": str(AMOUNT),
            "valid_before": VALID_BEFORE,
            "signature": SIGNATURE,
            "state": "signed",
            "tx_hash": None,
            "updated_at": START,
        }
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), [row])
            await connection.execute(insert(PermitDeposit), [permit])
        yield World(base, depositor, row["id"])


async def test_a_signed_authorization_is_deposited_once(world: World) -> None:
    await world.depositor.tick()
    permit, (deposit,) = await world.rows()
    assert permit.state == "signed" and world.chain.sent == [deposit.tx_hash]
    sent = TypedTransaction.from_bytes(HexBytes(deposit.raw_transaction)).as_dict()
    depository = world.base.config.contracts.depository
    assert bytes(sent["to"]) == bytes.fromhex(depository[2:])
    expected = calldata.deposit_erc20_with_authorization(
        USER, TOKEN, AMOUNT, VALID_BEFORE, bytes.fromhex(ORDER_ID[2:]), bytes.fromhex(SIGNATURE[2:])
    )
    assert bytes(sent["data"]) == expected
    await world.depositor.tick()  # sent, not mined: nothing new
    world.chain.mine(deposit.tx_hash)
    await world.depositor.tick()
    permit, journal = await world.rows()
    assert (permit.state, permit.tx_hash) == ("sent", deposit.tx_hash)
    assert len(journal) == 1 and world.chain.sent == [deposit.tx_hash]


async def test_a_refused_authorization_fails_and_sends_nothing(world: World) -> None:
    reason = RevertReason("AuthorizationAlreadyUsed", (USER, bytes(32)))
    world.chain.fail("estimate_gas", Reverted("reverted", data=b"\x01", reason=reason))
    await world.depositor.tick()
    permit, journal = await world.rows()
    assert permit.state == "failed" and journal == [] and world.chain.sent == []


async def test_a_deposit_reverted_on_chain_is_failed(world: World) -> None:
    await world.depositor.tick()
    _, (deposit,) = await world.rows()
    world.chain.mine(deposit.tx_hash, status=0)
    await world.depositor.tick()
    permit, _ = await world.rows()
    assert (permit.state, permit.tx_hash) == ("failed", deposit.tx_hash)


async def test_an_authorization_about_to_expire_is_not_sent(world: World) -> None:
    world.base.clock.now = START + timedelta(minutes=9, seconds=45)
    await world.depositor.tick()
    permit, journal = await world.rows()
    assert permit.state == "failed" and journal == [] and world.chain.sent == []


async def test_a_chain_failure_sends_nothing_and_is_retried(world: World) -> None:
    world.chain.fail("estimate_gas", ChainUnreachable("timeout"))
    await world.depositor.tick()
    permit, journal = await world.rows()
    assert permit.state == "signed" and journal == []
    await world.depositor.tick()
    _, (deposit,) = await world.rows()
    assert world.chain.sent == [deposit.tx_hash]
