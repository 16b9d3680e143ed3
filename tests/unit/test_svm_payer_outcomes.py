"""The SVM payer on an in-memory chain: each payment once, re-signed only after provable
expiry, refused only by a program, and every other failure left to retry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from solders.keypair import Keypair
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain import books
from crossfill.errors import ChainNotFound, ChainUnreachable
from crossfill.kinds.payment_outcomes import Paid, Pending, Refused
from crossfill.kinds.svm.client import LandedTransaction
from crossfill.kinds.svm.payer import SvmPayer
from crossfill.kinds.svm.transactions import LAMPORTS_PER_SIGNATURE, SvmPaymentOrder
from crossfill.store import books as ledger
from crossfill.store.tables import SvmPayment
from crossfill.types import NATIVE_SVM_ADDRESS
from tests.support.database import sessions_of, sqlite_url
from tests.unit.fake_svm import BLOCK_TIME_BASE, VALID_BLOCKS, FakeSvm
from tests.unit.worker_world import Clock

ORDER = SvmPaymentOrder(
    purpose="fill", key="0x" + "11" * 32, recipient=Keypair().pubkey(), mint=None,
    amount=10**9, decimals=9, memo="fill 0x11",
)  # fmt: skip


@pytest.fixture
async def sessions(tmp_path: Path) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    async with sessions_of(sqlite_url(tmp_path / "payer.db"), migrated=True) as sessions:
        yield sessions


async def _attempts(sessions: async_sessionmaker[AsyncSession]) -> list[tuple[int, str]]:
    async with sessions() as session:
        rows = await session.scalars(select(SvmPayment).order_by(SvmPayment.attempt))
        return [(row.attempt, row.status) for row in rows]


def _payer(chain: FakeSvm, sessions: async_sessionmaker[AsyncSession]) -> SvmPayer:
    return SvmPayer(chain, Keypair(), sessions, now=Clock())


async def test_a_landed_payment_is_paid_once_however_often_it_is_asked(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    chain = FakeSvm()
    payer = _payer(chain, sessions)
    first = await payer.pay(ORDER)
    assert isinstance(first, Pending)
    for _ in range(3):
        assert await payer.pay(ORDER) == Paid(
            first.attempt, await chain.landed_transaction(first.attempt)
        )
    assert len(chain.landed) == 1
    assert await _attempts(sessions) == [(1, "landed")]


async def test_a_dropped_payment_is_resent_as_is_until_provably_expired_then_re_signed(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    chain = FakeSvm(on_send="drop")
    payer = _payer(chain, sessions)
    first = await payer.pay(ORDER)
    assert isinstance(first, Pending)
    for _ in range(VALID_BLOCKS):  # up to and including the last valid block height
        chain.height += 1
        assert await payer.pay(ORDER) == Pending(first.attempt)
    assert set(chain.sent) == {first.attempt}  # only ever the same bytes
    assert await _attempts(sessions) == [(1, "signed")]

    chain.height += 1  # past it: that blockhash can never be included again
    chain.on_send = "land"
    second = await payer.pay(ORDER)
    assert isinstance(second, Pending) and second.attempt != first.attempt
    assert await _attempts(sessions) == [(1, "expired"), (2, "signed")]
    assert isinstance(await payer.pay(ORDER), Paid)
    assert list(chain.landed) == [second.attempt]


async def test_a_payment_that_landed_while_expiring_is_not_re_signed(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    chain = FakeSvm(on_send="drop")
    payer = _payer(chain, sessions)
    first = await payer.pay(ORDER)
    assert isinstance(first, Pending)
    chain.height += VALID_BLOCKS + 1
    # It landed after all (the drop was only this node's view): its status wins.
    chain.land_dropped(first.attempt)
    landed = LandedTransaction(chain.height, BLOCK_TIME_BASE + chain.height, LAMPORTS_PER_SIGNATURE)
    assert await payer.pay(ORDER) == Paid(first.attempt, landed)
    assert await _attempts(sessions) == [(1, "landed")]


async def test_only_the_program_refuses_a_payment(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    chain = FakeSvm(unreachable=True)
    payer = _payer(chain, sessions)
    with pytest.raises(ChainUnreachable):
        await payer.pay(ORDER)
    assert await _attempts(sessions) == []
    chain.unreachable, chain.on_send = False, "refuse"
    refused = await payer.pay(ORDER)
    assert isinstance(refused, Refused)
    assert refused.reason == {"InstructionError": [0, {"Custom": 1}]}
    assert await payer.pay(ORDER) == refused
    assert await _attempts(sessions) == [(1, "failed")]


async def test_an_outage_after_journalling_resends_the_journalled_bytes(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    chain = FakeSvm(on_send="drop")
    payer = _payer(chain, sessions)
    first = await payer.pay(ORDER)
    assert isinstance(first, Pending)
    chain.unreachable = True
    with pytest.raises(ChainUnreachable):
        await payer.pay(ORDER)
    chain.unreachable, chain.on_send = False, "land"
    await payer.pay(ORDER)
    assert isinstance(await payer.pay(ORDER), Paid)
    assert list(chain.landed) == [first.attempt]


async def test_a_landed_payment_the_node_cannot_show_yet_is_asked_again_never_resent(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """Its status says landed, but reading the transaction back (its slot, time and fee for
    the record) fails: a node behind that does not know it yet, then one unreachable. The
    payment stays landed, nothing is signed or sent again, and the next ask reads it."""
    chain = FakeSvm()
    payer = _payer(chain, sessions)
    first = await payer.pay(ORDER)
    assert isinstance(first, Pending)
    shown = chain.transactions.pop(first.attempt)
    with pytest.raises(ChainNotFound):
        await payer.pay(ORDER)
    chain.transactions[first.attempt] = shown
    chain.unreachable = True
    with pytest.raises(ChainUnreachable):
        await payer.pay(ORDER)
    chain.unreachable = False
    assert await payer.pay(ORDER) == Paid(
        first.attempt, await chain.landed_transaction(first.attempt)
    )
    assert set(chain.sent) == {first.attempt}
    assert await _attempts(sessions) == [(1, "landed")]


async def test_a_landed_payment_posts_its_books_once_as_it_is_settled(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    chain = FakeSvm()
    vault = Keypair()
    payer = SvmPayer(chain, vault, sessions, now=Clock())
    fill = ledger.fill_books(
        ORDER.key, chain.chain_id, NATIVE_SVM_ADDRESS, ORDER.amount, str(vault.pubkey())
    )
    first = await payer.pay(ORDER, fill)
    assert isinstance(first, Pending)
    async with sessions() as session:
        assert await ledger.balances(session) == {}  # sent, not yet paid: nothing moved
    for _ in range(3):
        assert isinstance(await payer.pay(ORDER, fill), Paid)
    held = books.key_account(str(vault.pubkey()))
    async with sessions() as session:
        found = await ledger.balances(session, chain.chain_id)
    sol = NATIVE_SVM_ADDRESS.lower()
    assert found[(chain.chain_id, sol, held)] == -(ORDER.amount + LAMPORTS_PER_SIGNATURE)
    assert found[(chain.chain_id, sol, books.FILLED)] == ORDER.amount
    assert found[(chain.chain_id, sol, books.GAS)] == LAMPORTS_PER_SIGNATURE
