"""The app-fee payer on the in-memory chain port: a filed claim is paid once and its shares
with it; a payout whose broadcast answer was lost is resumed from the journal; one that
reverted is sent again as the very same Depository call (so at most one can ever execute);
and the expirations it signs never leave two different payouts valid at once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from eth_account import Account
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import insert, select

from crossfill.domain.app_fee_claim import ClaimTerms
from crossfill.domain.call_request import (
    AUTHORISATION_SECONDS,
    EXPIRY_MARGIN_SECONDS,
    payout_expiration,
)
from crossfill.errors import ChainUnreachable
from crossfill.kinds.evm.app_fee_payer import AppFeePayer
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.store import app_fee_claims
from crossfill.store.tables import AppFee, AppFeeClaim, Request, SentTransaction
from crossfill.types import NATIVE_EVM_ADDRESS, Address
from tests.support.synthetic import synthetic_requests
from tests.unit.fake_chain import FakeChain
from tests.unit.foreign_nonce import signed_again_after_a_foreign_nonce
from tests.unit.worker_world import START, ChainWorld, chain_world

RECIPIENT = Address("0x" + "5a" * 20)
SHARES = (3 * 10**15, 2 * 10**15)


@dataclass
class World:
    base: ChainWorld
    payer: AppFeePayer

    @property
    def chain(self) -> FakeChain:
        return self.base.chain

    async def rows(self) -> tuple[AppFeeClaim, list[AppFee], list[SentTransaction]]:
        async with self.base.sessions() as session:
            claim = await session.scalar(select(AppFeeClaim))
            shares = list(await session.scalars(select(AppFee).order_by(AppFee.id)))
            journal = list(await session.scalars(select(SentTransaction)))
        assert claim is not None
        return claim, shares, journal


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        txmanager = TxManager(
            base.chain, base.state, base.signer(), base.sessions, now=base.clock, holder="me"
        )
        payer = AppFeePayer(
            base.runtime,
            base.sessions,
            txmanager,
            Account.create(),
            now=base.clock,
            interval_seconds=0.1,
        )
        (row,) = synthetic_requests(1, start=START).requests
        shares = [
            {
                "request_id": row["id"],
                "recipient": RECIPIENT,
                "chain_id": base.config.id,
                "currency": NATIVE_EVM_ADDRESS,
                "bps": 10,
                "quoted_amount": str(amount),
                "actual_amount": str(amount),
                "amount_usd_micros": 1,
                "state": "owed",
                "updated_at": START,
            }
            for amount in SHARES
        ]
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), [row])
            await connection.execute(insert(AppFee), shares)
        terms = ClaimTerms(
            RECIPIENT, RECIPIENT, base.config.id, NATIVE_EVM_ADDRESS, sum(SHARES), 2, 0
        )
        async with base.sessions() as session, session.begin():
            owed = await app_fee_claims.owed_shares(
                session, RECIPIENT, base.config.id, NATIVE_EVM_ADDRESS
            )
            assert await app_fee_claims.file(session, terms, terms.claim_id(), owed, now=START)
        yield World(base, payer)


def _calldata(row: SentTransaction) -> bytes:
    return bytes(TypedTransaction.from_bytes(HexBytes(row.raw_transaction)).as_dict()["data"])


async def test_a_filed_claim_is_paid_once_with_its_shares(world: World) -> None:
    await world.payer.tick()
    claim, shares, (payout,) = await world.rows()
    assert (claim.state, claim.tx_hash) == ("submitted", payout.tx_hash)
    assert [share.state for share in shares] == ["claiming", "claiming"]
    world.chain.mine(payout.tx_hash)
    await world.payer.tick()
    await world.payer.tick()
    claim, shares, journal = await world.rows()
    assert claim.state == "paid" and [share.state for share in shares] == ["paid", "paid"]
    assert len(journal) == 1 and world.chain.sent == [payout.tx_hash]


async def test_a_lost_payout_answer_is_resumed_from_the_journal(world: World) -> None:
    world.chain.fail("send_raw_after_taking", ChainUnreachable("connection reset"))
    await world.payer.tick()
    claim, _, (journalled,) = await world.rows()
    assert claim.state == "claiming" and world.chain.sent == [journalled.tx_hash]
    await world.payer.tick()
    claim, _, journal = await world.rows()
    assert (claim.state, claim.tx_hash) == ("submitted", journalled.tx_hash)
    assert len(journal) == 1 and world.chain.sent == [journalled.tx_hash]


async def test_a_reverted_payout_is_sent_again_as_the_same_depository_call(world: World) -> None:
    await world.payer.tick()
    _, _, (first,) = await world.rows()
    world.chain.mine(first.tx_hash, status=0)
    await world.payer.tick()
    claim, _, (_, second) = await world.rows()
    assert claim.state == "submitted" and second.nonce == first.nonce + 1
    assert _calldata(second) == _calldata(first)
    world.chain.mine(second.tx_hash)
    await world.payer.tick()
    claim, shares, _ = await world.rows()
    assert (claim.state, claim.tx_hash) == ("paid", second.tx_hash)
    assert [share.state for share in shares] == ["paid", "paid"]


@given(
    created=st.integers(min_value=0, max_value=2**40),
    elapsed=st.integers(min_value=-(10**6), max_value=10 * AUTHORISATION_SECONDS),
)
def test_payout_expirations_never_overlap(created: int, elapsed: int) -> None:
    head = created + elapsed
    expiration = payout_expiration(created, head)
    if expiration is None:
        return
    periods, remainder = divmod(expiration - created, AUTHORISATION_SECONDS)
    assert remainder == 0 and periods >= 1
    assert expiration - head >= EXPIRY_MARGIN_SECONDS
    # Every earlier expiration is already passed on chain: no payout signed with it can run.
    assert periods == 1 or created + (periods - 1) * AUTHORISATION_SECONDS < head


async def test_a_payout_whose_nonce_another_transaction_took_is_signed_again(
    world: World,
) -> None:
    await world.payer.tick()

    async def journal() -> list[SentTransaction]:
        return (await world.rows())[2]

    again = await signed_again_after_a_foreign_nonce(
        world.chain, world.base.clock, world.payer.txmanager.sender, world.payer.tick, journal
    )
    assert _calldata(again) == _calldata((await journal())[0])  # the same Depository call
    world.chain.mine(again.tx_hash)
    await world.payer.tick()
    claim, _, _ = await world.rows()
    assert (claim.state, claim.tx_hash) == ("paid", again.tx_hash)
