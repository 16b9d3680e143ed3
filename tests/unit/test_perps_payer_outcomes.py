"""The perps payer on an in-memory exchange (the devnet exchange's rules): each payment is
journalled before it is posted, credited once however often it is asked or re-posted, a
refusal is final, a dead nonce is re-signed, and transient failures are left to retry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from eth_account import Account
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.devnet.exchange.deployment import perps_document
from crossfill.errors import ChainUnreachable
from crossfill.kinds.payment_outcomes import Paid, Pending, Refused
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS, PerpsExchangeConfig
from crossfill.kinds.perps.payer import PerpsPayer, PerpsPaymentOrder
from crossfill.kinds.perps.solver import fail_reason
from crossfill.store.tables import PerpsPayment
from tests.support.database import sessions_of, sqlite_url
from tests.unit.fake_exchange import FakeExchange
from tests.unit.worker_world import Clock

SOLVER = Account.create()
RECIPIENT = Account.create().address
ORDER = PerpsPaymentOrder(
    purpose="fill", key="0x" + "11" * 32, destination=RECIPIENT, currency=PERPS_USDC_ADDRESS,
    amount=12_500_000, decimals=6,
)  # fmt: skip
CONFIG = PerpsExchangeConfig.model_validate(
    {**perps_document(api_url="http://exchange.test"),
     "solver": {"address": SOLVER.address, "key": "env:UNUSED"}}
)  # fmt: skip


@pytest.fixture
async def sessions(tmp_path: Path) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    async with sessions_of(sqlite_url(tmp_path / "payer.db"), migrated=True) as sessions:
        yield sessions


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def exchange(tmp_path: Path, clock: Clock) -> FakeExchange:
    fake = FakeExchange(tmp_path / "exchange.sqlite3", clock)
    fake.fund_usd(SOLVER.address, 100)
    return fake


def _payer(
    exchange: FakeExchange, sessions: async_sessionmaker[AsyncSession], clock: Clock
) -> PerpsPayer:
    return PerpsPayer(exchange, CONFIG, SOLVER, sessions, now=clock)


async def _attempts(sessions: async_sessionmaker[AsyncSession]) -> list[tuple[int, str]]:
    async with sessions() as session:
        rows = await session.scalars(select(PerpsPayment).order_by(PerpsPayment.attempt))
        return [(row.attempt, row.status) for row in rows]


async def test_a_payment_is_credited_once_however_often_it_is_asked(
    exchange: FakeExchange, sessions: async_sessionmaker[AsyncSession], clock: Clock
) -> None:
    payer = _payer(exchange, sessions, clock)
    first = await payer.pay(ORDER)
    assert isinstance(first, Paid) and first.reference.startswith("0x")
    for _ in range(3):  # answered from the journal, the ledger's hash and time included
        assert await payer.pay(ORDER) == first
    assert exchange.usd(RECIPIENT) == Decimal("12.5")
    assert exchange.usd(SOLVER.address) == Decimal("87.5")
    assert len(exchange.posted) == 1
    assert exchange.posted[0]["action"]["type"] == "sendAsset"  # type: ignore[index]
    assert await _attempts(sessions) == [(1, "credited")]


async def test_the_action_is_journalled_before_it_is_posted(
    exchange: FakeExchange, sessions: async_sessionmaker[AsyncSession], clock: Clock
) -> None:
    exchange.on_post = "unreachable"
    with pytest.raises(ChainUnreachable):
        await _payer(exchange, sessions, clock).pay(ORDER)
    async with sessions() as session:
        (journalled,) = await session.scalars(select(PerpsPayment))
    assert journalled.status == "signed"
    assert journalled.signed_action == exchange.posted[0]


async def test_a_lost_answer_is_re_posted_as_the_same_action_and_credits_once(
    exchange: FakeExchange, sessions: async_sessionmaker[AsyncSession], clock: Clock
) -> None:
    """The exchange took it but the answer was lost (as after a timeout, or a kill -9 right
    after posting): the retry posts the very same signed action, which the exchange refuses
    as a duplicate nonce, and the ledger shows the one credit."""
    exchange.on_post = "lose_answer"
    exchange.ledger_readable = False
    payer = _payer(exchange, sessions, clock)
    with pytest.raises(ChainUnreachable):
        await payer.pay(ORDER)
    exchange.on_post = "answer"
    assert isinstance(await payer.pay(ORDER), Pending)  # duplicate nonce, ledger lagging
    exchange.ledger_readable = True
    assert isinstance(await payer.pay(ORDER), Paid)
    assert exchange.posted[0] == exchange.posted[1]
    assert exchange.usd(RECIPIENT) == Decimal("12.5")
    assert await _attempts(sessions) == [(1, "credited")]


async def test_a_post_that_never_arrived_is_re_posted_and_credits_once(
    exchange: FakeExchange, sessions: async_sessionmaker[AsyncSession], clock: Clock
) -> None:
    exchange.on_post = "unreachable"
    payer = _payer(exchange, sessions, clock)
    for _ in range(2):
        with pytest.raises(ChainUnreachable):
            await payer.pay(ORDER)
    exchange.on_post = "answer"
    assert isinstance(await payer.pay(ORDER), Paid)
    assert len({str(body) for body in exchange.posted}) == 1
    assert exchange.usd(RECIPIENT) == Decimal("12.5")


async def test_a_refusal_is_final_and_nothing_is_re_signed(
    exchange: FakeExchange, sessions: async_sessionmaker[AsyncSession], clock: Clock
) -> None:
    payer = _payer(exchange, sessions, clock)
    too_much = PerpsPaymentOrder(**{**ORDER.__dict__, "amount": 101 * 10**6})
    outcome = await payer.pay(too_much)
    assert outcome == Refused("Insufficient balance for transfer")
    assert await payer.pay(too_much) == outcome
    assert len(exchange.posted) == 1
    assert await _attempts(sessions) == [(1, "refused")]
    assert exchange.usd(SOLVER.address) == 100


async def test_an_action_whose_nonce_left_the_window_is_dead_and_re_signed(
    exchange: FakeExchange, sessions: async_sessionmaker[AsyncSession], clock: Clock
) -> None:
    exchange.on_post = "unreachable"
    payer = _payer(exchange, sessions, clock)
    with pytest.raises(ChainUnreachable):
        await payer.pay(ORDER)
    clock.advance(timedelta(days=2, seconds=1))  # the exchange can never take that nonce now
    exchange.on_post = "answer"
    outcome = await payer.pay(ORDER)
    assert isinstance(outcome, Paid)
    assert await _attempts(sessions) == [(1, "dead"), (2, "credited")]
    first, _refused, second = exchange.posted
    assert first["nonce"] != second["nonce"]
    assert exchange.usd(RECIPIENT) == Decimal("12.5")


async def test_each_payment_gets_its_own_nonce_even_within_one_millisecond(
    exchange: FakeExchange, sessions: async_sessionmaker[AsyncSession], clock: Clock
) -> None:
    payer = _payer(exchange, sessions, clock)
    for index in range(3):
        order = PerpsPaymentOrder(**{**ORDER.__dict__, "key": f"0x{index:064x}"})
        assert isinstance(await payer.pay(order), Paid)
    assert len({body["nonce"] for body in exchange.posted}) == 3
    assert exchange.usd(RECIPIENT) == Decimal("37.5")


@pytest.mark.parametrize(
    ("refusal", "reason"),
    [
        ("Insufficient balance for transfer", "SOLVER_BALANCE_TOO_LOW"),
        ("User or API Wallet 0xabc does not exist.", "TRANSFER_FAILED"),
    ],
)
def test_an_exchange_refusal_fails_the_request_with_its_reason(refusal: str, reason: str) -> None:
    assert fail_reason(refusal) == reason
