"""The sponsor collector on the in-memory chain port: a due payment is pulled once with
`transferFrom(sponsor, solver, amount)`; only the token's own revert marks it failed; a chain
failure sends nothing and is tried again; a pull whose broadcast answer was lost is resumed
from the journal, never signed twice."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes

from crossfill.contracts import calldata
from crossfill.contracts.reverts import RevertReason
from crossfill.errors import ChainUnreachable, RateLimited, Reverted
from crossfill.kinds.evm.sponsor_collector import SponsorCollector
from crossfill.store.tables import SponsorPayment
from tests.unit.foreign_nonce import signed_again_after_a_foreign_nonce
from tests.unit.one_request_world import TOKEN, OneRequestWorld, one_request_world

SPONSOR = "0x" + "5b" * 20
AMOUNT = 1_250_000

World = OneRequestWorld[SponsorPayment, SponsorCollector]


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    payment = {
        "currency": TOKEN,
        "sponsor": SPONSOR,
        "amount": str(AMOUNT),
        "amount_usd_micros": 1_250_000,
        "state": "due",
    }
    async with one_request_world(
        tmp_path,
        SponsorCollector,
        SponsorPayment,
        status="success",
        side="destination",
        columns=payment,
    ) as world:
        yield world


def _revert() -> Reverted:
    reason = RevertReason("Error", ("ERC20: insufficient allowance",))
    return Reverted("execution reverted", data=b"\x08\xc3\x79\xa0", reason=reason)


async def test_a_due_payment_is_pulled_once_and_marked_paid(world: World) -> None:
    await world.worker.tick()
    payment, (pull,) = await world.rows()
    assert payment.state == "due" and world.chain.sent == [pull.tx_hash]
    sent = TypedTransaction.from_bytes(HexBytes(pull.raw_transaction)).as_dict()
    assert bytes(sent["to"]) == bytes.fromhex(TOKEN[2:])
    pull_call = calldata.erc20_transfer_from(SPONSOR, world.solver.address, AMOUNT)
    assert bytes(sent["data"]) == pull_call
    await world.worker.tick()  # sent, not mined: nothing new
    assert len(world.chain.sent) == 1
    world.chain.mine(pull.tx_hash)
    await world.worker.tick()
    await world.worker.tick()
    payment, journal = await world.rows()
    assert (payment.state, payment.tx_hash) == ("paid", pull.tx_hash)
    assert len(journal) == 1 and len(world.chain.sent) == 1


async def test_the_tokens_revert_in_simulation_fails_the_payment_and_sends_nothing(
    world: World,
) -> None:
    world.chain.fail("estimate_gas", _revert())
    await world.worker.tick()
    payment, journal = await world.rows()
    assert payment.state == "failed" and journal == [] and world.chain.sent == []
    await world.worker.tick()
    assert world.chain.sent == []


async def test_a_pull_reverted_on_chain_is_failed(world: World) -> None:
    await world.worker.tick()
    _, (pull,) = await world.rows()
    world.chain.mine(pull.tx_hash, status=0)
    await world.worker.tick()
    payment, _ = await world.rows()
    assert (payment.state, payment.tx_hash) == ("failed", pull.tx_hash)


@pytest.mark.parametrize(
    "outcome",
    [ChainUnreachable("timeout"), RateLimited("429", retry_after_seconds=1.0)],
    ids=["unreachable", "rate-limited"],
)
async def test_a_chain_failure_while_simulating_sends_nothing_and_is_retried(
    world: World, outcome: Exception
) -> None:
    world.chain.fail("estimate_gas", outcome)
    # A 429 ends the tick for the loop's backoff (`loops.each_on_its_own`); the rest is kept.
    with contextlib.suppress(RateLimited):
        await world.worker.tick()
    payment, journal = await world.rows()
    assert payment.state == "due" and journal == [] and world.chain.sent == []
    await world.worker.tick()
    payment, (pull,) = await world.rows()
    assert payment.state == "due" and world.chain.sent == [pull.tx_hash]


async def test_a_lost_broadcast_answer_is_resumed_from_the_journal(world: World) -> None:
    world.chain.fail("send_raw_after_taking", ChainUnreachable("connection reset"))
    await world.worker.tick()
    _, (journalled,) = await world.rows()
    assert world.chain.sent == [journalled.tx_hash]
    await world.worker.tick()
    world.chain.mine(journalled.tx_hash)
    await world.worker.tick()
    payment, journal = await world.rows()
    assert (payment.state, payment.tx_hash) == ("paid", journalled.tx_hash)
    assert len(journal) == 1 and set(world.chain.sent) == {journalled.tx_hash}


async def test_a_pull_whose_nonce_another_transaction_took_is_signed_again(world: World) -> None:
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
    payment, _ = await world.rows()
    assert (payment.state, payment.tx_hash) == ("paid", again.tx_hash)
