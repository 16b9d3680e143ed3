"""The transaction manager on the in-memory chain: what its key cannot pay for is never signed
(nor held behind by anything after it), and a nonce another transaction took is noticed at
the first answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from crossfill.errors import CannotPayGas, ChainError, InsufficientFunds, NonceTooLow
from crossfill.kinds.evm.txmanager import InFlight, Mined, TxManager
from crossfill.store.tables import SentTransaction
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import chain_world

TO = "0x" + "ab" * 20
GAS = 50_000


@dataclass
class World:
    chain: FakeChain
    txmanager: TxManager
    balance: list[int | None]  # the key's balance as the follower last read it

    async def send(self, purpose: str, value: int = 0) -> SentTransaction:
        return await self.txmanager.send(
            to=TO, data=b"", value=value, gas_limit=GAS, purpose=purpose, request_id=None
        )

    async def journal(self) -> list[SentTransaction]:
        async with self.txmanager.sessions() as session:
            rows = await session.scalars(select(SentTransaction).order_by(SentTransaction.id))
            return list(rows)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        balance: list[int | None] = [10**18]
        txmanager = TxManager(
            base.chain,
            base.state,
            base.signer(),
            base.sessions,
            now=base.clock,
            holder="me",
            funds=lambda: balance[0],
        )
        yield World(base.chain, txmanager, balance)


async def test_a_transaction_the_key_cannot_pay_for_is_not_signed(world: World) -> None:
    max_fee, _tip = world.txmanager.state.offered_fees()
    world.balance[0] = 10**17 + GAS * max_fee - 1  # one wei short of value and gas
    with pytest.raises(InsufficientFunds) as refused:
        await world.send("refund:1", value=10**17)
    assert refused.value.shortfall == 1
    assert await world.journal() == [] and world.chain.sent == []
    sent = await world.send("sweep")  # what it can pay goes, under the nonce left free
    assert sent.nonce == 0 and world.chain.sent == [sent.tx_hash]


async def test_what_its_transactions_in_flight_may_take_is_spoken_for(world: World) -> None:
    max_fee, _tip = world.txmanager.state.offered_fees()
    world.balance[0] = 2 * 10**17
    first = await world.send("refund:1", value=10**17)
    assert world.txmanager.available() == 10**17 - GAS * max_fee
    with pytest.raises(InsufficientFunds):
        await world.send("refund:2", value=10**17)
    world.chain.mine(first.tx_hash)
    assert isinstance(await world.txmanager.attempt(None, "refund:1"), Mined)
    world.balance[0] = 2 * 10**17 - 10**17 - GAS  # the next reading, the first paid
    second = await world.send("refund:2", value=10**17 // 2)
    assert second.nonce == 1


async def test_without_a_known_balance_the_node_judges(world: World) -> None:
    world.balance[0] = None
    assert world.txmanager.available() is None
    world.chain.fund(world.txmanager.sender, 2 * 10**30)  # more than the service knows of
    await world.send("sweep", value=10**30)
    assert len(world.chain.sent) == 1


async def test_a_transaction_a_node_refuses_for_funds_has_its_nonce_voided(world: World) -> None:
    world.chain.fail("send_raw", CannotPayGas("Insufficient funds for gas * price + value"))
    with pytest.raises(ChainError):
        await world.send("claim:1")
    refused, void = await world.journal()
    assert (refused.nonce, void.nonce, void.purpose) == (0, 0, "void")
    assert world.chain.sent == [void.tx_hash]
    after = await world.send("claim:2")
    assert after.nonce == 1  # not held behind the refused one


async def test_nonce_too_low_for_a_transaction_just_signed_reads_the_count_again(
    world: World,
) -> None:
    first = await world.send("sweep:1")
    world.chain.nonces[world.txmanager.sender] = 3  # nonces 1 and 2 went to others by hand
    world.chain.fail("send_raw", NonceTooLow("nonce too low"))
    stranded = await world.send("sweep:2")
    assert (first.nonce, stranded.nonce) == (0, 1)
    assert isinstance(await world.txmanager.attempt(None, "sweep:2"), InFlight)
    later = await world.send("sweep:3")
    assert later.nonce == 3  # the count read again, not one past the stranded row
