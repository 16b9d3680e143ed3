"""The perps watcher and refunder on an in-memory exchange (the devnet's rules): a user's
transfer under a mapped nonce moves its request to `pending` once, however often the ledger
is read and by however many watchers; a request that failed after its transfer was accepted
is refunded once, to its `refundTo`, even when the exchange's answer is lost."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.devnet.exchange.deployment import perps_document
from crossfill.domain.nonce_mapping import NonceMapping
from crossfill.domain.status import RequestStatus
from crossfill.kinds.perps.actions import SendAsset, sign_action
from crossfill.kinds.perps.client import PerpsState
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS, PerpsExchangeConfig
from crossfill.kinds.perps.inventory import PerpsInventory
from crossfill.kinds.perps.payer import PerpsPayer
from crossfill.kinds.perps.refunder import PerpsRefunder
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.kinds.perps.watcher import PerpsWatcher
from crossfill.store import nonce_mappings, requests
from crossfill.store.db import session_factory
from crossfill.store.tables import Deposit, PerpsPayment, Request
from crossfill.types import Address, ChainId
from tests.support.database import engine_of, sqlite_url
from tests.support.synthetic import synthetic_requests
from tests.unit.fake_exchange import FakeExchange
from tests.unit.worker_world import START, Clock

SOLVER = Account.create()
CONFIG = PerpsExchangeConfig.model_validate(
    {**perps_document(api_url="http://exchange.test"),
     "solver": {"address": SOLVER.address, "key": "env:UNUSED"}}
)  # fmt: skip
NONCE = int((START + timedelta(seconds=1)).timestamp() * 1000)


@dataclass
class World:
    sessions: async_sessionmaker[AsyncSession]
    exchange: FakeExchange
    clock: Clock
    user: LocalAccount
    refund_to: str
    request_id: str

    def live(self) -> PerpsRuntime:
        """The exchange as this process keeps it."""
        inventory = PerpsInventory(self.exchange, CONFIG, lambda: 0.0)
        return PerpsRuntime(CONFIG, self.exchange, PerpsState(CONFIG.id), inventory)

    def watcher(self) -> PerpsWatcher:
        return PerpsWatcher(
            self.live(), sessions=self.sessions, now=self.clock, interval_seconds=0.1
        )

    def refunder(self) -> PerpsRefunder:
        payer = PerpsPayer(self.exchange, CONFIG, SOLVER, self.sessions, now=self.clock)
        return PerpsRefunder(
            self.live(), payer, sessions=self.sessions, now=self.clock, interval_seconds=0.1
        )

    async def transfer(self, amount: str = "25") -> None:
        action = SendAsset(
            "Testnet", 0x66EEE, SOLVER.address.lower(), amount, source_dex="",
            destination_dex="", token=CONFIG.usdc_token, from_sub_account="", nonce_value=NONCE,
        )  # fmt: skip
        await self.exchange.post_action(sign_action(action, self.user))

    async def request(self) -> Request:
        async with self.sessions() as session:
            request = await requests.get(session, self.request_id)
            assert request is not None
            return request

    async def deposits(self) -> list[Deposit]:
        async with self.sessions() as session:
            return list(await session.scalars(select(Deposit)))


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with engine_of(sqlite_url(tmp_path / "watcher.db"), migrated=True) as engine:
        sessions = session_factory(engine)
        clock = Clock()
        exchange = FakeExchange(tmp_path / "exchange.sqlite3", clock)
        user, refund_to = Account.create(), Account.create().address.lower()
        exchange.fund_usd(SOLVER.address, 100)
        exchange.fund_usd(user.address, 100)
        (row,) = synthetic_requests(1, start=START).requests
        row.update(
            status="waiting", fail_reason=None, refund_fail_reason=None, origin_chain_id=CONFIG.id,
            user_address=user.address.lower(), refund_to=refund_to,
            origin_currency=PERPS_USDC_ADDRESS, amount_in="25000000",
            expires_at=START + timedelta(minutes=5), created_at=START, updated_at=START,
            plan={"kind": "perps_withdrawal", "token": CONFIG.usdc_token, "sourceDex": ""},
        )  # fmt: skip
        async with engine.begin() as connection:
            await connection.execute(insert(Request), [row])
        async with sessions() as session, session.begin():
            mapping = NonceMapping(
                ChainId(CONFIG.id), Address(user.address), Address(user.address), row["id"], NONCE,
                ChainId(1),
            )  # fmt: skip
            nonce_mappings.add(session, mapping, "0x" + "11" * 65, now=START)
        clock.advance(timedelta(seconds=1))
        yield World(sessions, exchange, clock, user, refund_to, row["id"])
    await exchange.close()


async def test_a_mapped_transfer_moves_its_request_to_pending_once(world: World) -> None:
    await world.watcher().tick()  # the cursor starts at the first withdrawal quoted
    await world.transfer()
    for watcher in (world.watcher(), world.watcher()):  # a restart reads the same ledger
        await watcher.tick()
        await watcher.tick()
    (deposit,) = await world.deposits()
    assert (deposit.outcome, deposit.amount, deposit.currency) == (
        "ACCEPTED", "25000000", PERPS_USDC_ADDRESS,
    )  # fmt: skip
    assert (await world.request()).status == RequestStatus.PENDING


async def test_a_failed_request_is_refunded_once_to_its_refund_to_despite_a_lost_answer(
    world: World,
) -> None:
    await world.transfer()
    await world.watcher().tick()
    async with world.sessions() as session, session.begin():
        request = await requests.get(session, world.request_id)
        assert request is not None
        await requests.move(
            session, request, RequestStatus.FAILURE, now=world.clock(), fail_reason="ORDER_EXPIRED"
        )
    world.exchange.on_post = "lose_answer"
    await world.refunder().tick()  # taken by the exchange; the answer never came back
    (deposit,) = await world.deposits()
    assert deposit.refund_status is None
    world.exchange.on_post = "answer"
    world.clock.advance(timedelta(seconds=2))
    for _ in range(3):
        await world.refunder().tick()
    # Found in the ledger after the lost answer: never signed or posted again.
    assert len(world.exchange.posted) == 2  # the user's transfer, the one refund
    assert world.exchange.usd(world.refund_to) == Decimal(25)
    assert world.exchange.usd(SOLVER.address) == Decimal(100)  # got 25, gave 25 back
    assert (await world.request()).status == RequestStatus.REFUND
    async with world.sessions() as session:
        (payment,) = await session.scalars(select(PerpsPayment))
    assert (payment.purpose, payment.status) == ("refund", "credited")
    (deposit,) = await world.deposits()
    assert (deposit.refund_status, deposit.refund_tx_hash) == ("done", payment.tx_hash)
