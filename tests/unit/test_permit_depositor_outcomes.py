"""The permit depositor on the in-memory chain port: a signed authorization is sent once as
`Depository.depositErc20WithAuthorization`; only the chain's revert, or its expiry, fails it;
a chain failure sends nothing and is tried again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes

from crossfill.contracts import calldata
from crossfill.contracts.reverts import RevertReason
from crossfill.errors import ChainUnreachable, Reverted
from crossfill.kinds.evm.permit_depositor import PermitDepositor
from crossfill.store.tables import PermitDeposit
from tests.unit.foreign_nonce import signed_again_after_a_foreign_nonce
from tests.unit.one_request_world import TOKEN, OneRequestWorld, one_request_world
from tests.unit.worker_world import START

USER = "0x" + "5b" * 20
AMOUNT = 25_000_000
ORDER_ID = "0x" + "0d" * 32
SIGNATURE = "0x" + "51" * 65
VALID_BEFORE = int((START + timedelta(minutes=10)).timestamp())

World = OneRequestWorld[PermitDeposit, PermitDepositor]


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    permit = {
        "order_id": ORDER_ID,
        "depositor": USER,
        "currency": TOKEN,
        "amount": str(AMOUNT),
        "valid_before": VALID_BEFORE,
        "signature": SIGNATURE,
        "state": "signed",
    }
    async with one_request_world(
        tmp_path, PermitDepositor, PermitDeposit, status="waiting", side="origin", columns=permit
    ) as world:
        yield world


async def test_a_signed_authorization_is_deposited_once(world: World) -> None:
    await world.worker.tick()
    permit, (deposit,) = await world.rows()
    assert permit.state == "signed" and world.chain.sent == [deposit.tx_hash]
    sent = TypedTransaction.from_bytes(HexBytes(deposit.raw_transaction)).as_dict()
    depository = world.base.config.contracts.depository
    assert bytes(sent["to"]) == bytes.fromhex(depository[2:])
    expected = calldata.deposit_erc20_with_authorization(
        USER, TOKEN, AMOUNT, VALID_BEFORE, bytes.fromhex(ORDER_ID[2:]), bytes.fromhex(SIGNATURE[2:])
    )
    assert bytes(sent["data"]) == expected
    await world.worker.tick()  # sent, not mined: nothing new
    world.chain.mine(deposit.tx_hash)
    await world.worker.tick()
    permit, journal = await world.rows()
    assert (permit.state, permit.tx_hash) == ("sent", deposit.tx_hash)
    assert len(journal) == 1 and world.chain.sent == [deposit.tx_hash]


async def test_a_refused_authorization_fails_and_sends_nothing(world: World) -> None:
    reason = RevertReason("AuthorizationAlreadyUsed", (USER, bytes(32)))
    world.chain.fail("estimate_gas", Reverted("reverted", data=b"\x01", reason=reason))
    await world.worker.tick()
    permit, journal = await world.rows()
    assert permit.state == "failed" and journal == [] and world.chain.sent == []


async def test_a_deposit_reverted_on_chain_is_failed(world: World) -> None:
    await world.worker.tick()
    _, (deposit,) = await world.rows()
    world.chain.mine(deposit.tx_hash, status=0)
    await world.worker.tick()
    permit, _ = await world.rows()
    assert (permit.state, permit.tx_hash) == ("failed", deposit.tx_hash)


async def test_an_authorization_about_to_expire_is_not_sent(world: World) -> None:
    world.base.clock.now = START + timedelta(minutes=9, seconds=45)
    await world.worker.tick()
    permit, journal = await world.rows()
    assert permit.state == "failed" and journal == [] and world.chain.sent == []


async def test_a_chain_failure_sends_nothing_and_is_retried(world: World) -> None:
    world.chain.fail("estimate_gas", ChainUnreachable("timeout"))
    await world.worker.tick()
    permit, journal = await world.rows()
    assert permit.state == "signed" and journal == []
    await world.worker.tick()
    _, (deposit,) = await world.rows()
    assert world.chain.sent == [deposit.tx_hash]


async def test_a_deposit_whose_nonce_another_transaction_took_is_signed_again(
    world: World,
) -> None:
    await world.worker.tick()
    again = await signed_again_after_a_foreign_nonce(
        world.chain,
        world.base.clock,
        world.worker.txmanager.sender,
        world.worker.tick,
        world.journal,
    )
    world.chain.mine(again.tx_hash)
    await world.worker.tick()
    permit, _ = await world.rows()
    assert (permit.state, permit.tx_hash) == ("sent", again.tx_hash)
