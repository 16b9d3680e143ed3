"""The exchange sender on an in-memory exchange: each action journalled before it is posted,
re-posted byte for byte after a lost answer, taken once, and re-signed only once its nonce is
out of the exchange's window without reaching the ledger."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.chains.perps import ActionAccepted, LedgerUpdate, Transfer
from crossfill.chains.perps_actions import SendAsset, SignedAction, recover_signer
from crossfill.domain.exchange_nonces import PAST_WINDOW_MS
from crossfill.errors import ActionRefused, ChainUnreachable
from crossfill.store.db import create_engine, session_factory
from crossfill.store.migrate import upgrade_async
from crossfill.store.tables import ExchangeAction
from crossfill.types import ChainId
from crossfill.workers.exchange_sender import ExchangeOrder, ExchangeSender, Taken, Waiting
from tests.unit.worker_world import Clock

SOLVER = Account.create()
USER = "0x" + "12" * 20


class FakeExchange:
    """Takes a signer's nonce once; `answer` is what a post gets back: `ok`, `lost` (taken,
    answer lost), `down` (not taken, unreachable) or `refuse` (not taken, refused)."""

    chain_id = ChainId(1337)

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.answer = "ok"
        self.posted: list[dict[str, Any]] = []
        self.ledger: list[LedgerUpdate] = []

    def now_ms(self) -> int:
        return int(self.clock().timestamp() * 1000)

    async def post_action(self, signed: SignedAction) -> ActionAccepted:
        self.posted.append(signed.request_body())
        if self.answer == "down":
            raise ChainUnreachable("exchange: ConnectError")
        if self.answer == "refuse":
            raise ActionRefused("Insufficient balance for transfer")
        signer = recover_signer(signed.action, signed.signature).lower()
        transfers = [u.delta for u in self.ledger if isinstance(u.delta, Transfer)]
        taken = {(transfer.user, transfer.nonce) for transfer in transfers}
        if (signer, signed.nonce) in taken:
            raise ActionRefused("Invalid nonce: duplicate nonce")
        action = signed.action
        assert isinstance(action, SendAsset)
        delta = Transfer("send", signer, action.destination, "USDC", Decimal(action.amount),
                         signed.nonce)  # fmt: skip
        self.ledger.append(LedgerUpdate(self.now_ms(), f"0x{len(self.ledger) + 1:064x}", delta))
        if self.answer == "lost":
            raise ChainUnreachable("exchange: ReadTimeout")
        return ActionAccepted(signed.nonce)

    async def ledger_updates(
        self, user: str, *, start_ms: int, end_ms: int | None = None
    ) -> list[LedgerUpdate]:
        return [u for u in self.ledger if u.time >= start_ms]


def _refund(nonce: int) -> SendAsset:
    return SendAsset(
        exchange_chain="Testnet", signature_chain_id=0x66EEE, destination=USER, amount="12.5",
        source_dex="", destination_dex="", token="USDC", from_sub_account="", nonce_value=nonce,
    )  # fmt: skip


ORDER = ExchangeOrder("refund", "0x" + "ab" * 32, _refund)


@pytest.fixture
async def sessions(tmp_path: Path) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'sender.db'}"
    await upgrade_async(url)
    engine = create_engine(url)
    yield session_factory(engine)
    await engine.dispose()


async def _journal(sessions: async_sessionmaker[AsyncSession]) -> list[tuple[int, str]]:
    async with sessions() as session:
        rows = await session.scalars(select(ExchangeAction).order_by(ExchangeAction.attempt))
        return [(row.attempt, row.status) for row in rows]


async def test_an_action_is_taken_once_however_often_it_is_sent(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    exchange = FakeExchange(clock)
    sender = ExchangeSender(exchange, SOLVER, sessions, now=clock)  # type: ignore[arg-type]
    first = await sender.send(ORDER)
    assert first == Taken(exchange.ledger[0].hash)
    for _ in range(3):
        assert await sender.send(ORDER) == first
    assert len(exchange.ledger) == 1 and len(exchange.posted) == 1
    assert await _journal(sessions) == [(1, "done")]


async def test_a_lost_answer_is_followed_by_the_same_body_and_credited_once(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    exchange = FakeExchange(clock)
    sender = ExchangeSender(exchange, SOLVER, sessions, now=clock)  # type: ignore[arg-type]
    exchange.answer = "lost"
    with pytest.raises(ChainUnreachable):
        await sender.send(ORDER)  # taken, but the answer never came back
    assert await _journal(sessions) == [(1, "signed")]
    exchange.answer = "ok"
    clock.advance(timedelta(seconds=5))
    assert await sender.send(ORDER) == Taken(exchange.ledger[0].hash)
    first, again = exchange.posted
    assert first == again  # re-posted byte for byte: the exchange's nonce rule refused it
    assert len(exchange.ledger) == 1


async def test_an_unreachable_exchange_leaves_the_action_journalled_for_the_next_try(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    exchange = FakeExchange(clock)
    sender = ExchangeSender(exchange, SOLVER, sessions, now=clock)  # type: ignore[arg-type]
    exchange.answer = "down"
    with pytest.raises(ChainUnreachable):
        await sender.send(ORDER)
    exchange.answer = "ok"
    assert isinstance(await sender.send(ORDER), Taken)
    assert exchange.posted[0] == exchange.posted[1]
    assert await _journal(sessions) == [(1, "done")]


async def test_a_refused_action_waits_and_is_re_signed_only_once_its_nonce_is_dead(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    clock = Clock()
    exchange = FakeExchange(clock)
    sender = ExchangeSender(exchange, SOLVER, sessions, now=clock)  # type: ignore[arg-type]
    exchange.answer = "refuse"
    waiting = await sender.send(ORDER)
    assert waiting == Waiting("Insufficient balance for transfer")
    assert await sender.send(ORDER) == waiting
    assert exchange.posted[0] == exchange.posted[1]
    clock.advance(timedelta(milliseconds=PAST_WINDOW_MS + 1))
    assert isinstance(await sender.send(ORDER), Waiting)  # declared dead, not re-signed yet
    assert await _journal(sessions) == [(1, "dead")]
    exchange.answer = "ok"
    assert isinstance(await sender.send(ORDER), Taken)
    assert await _journal(sessions) == [(1, "dead"), (2, "done")]
    assert exchange.posted[-1]["nonce"] != exchange.posted[0]["nonce"]
    assert len(exchange.ledger) == 1
