"""The perps payer's journal on SQLite and PostgreSQL: two payers (two processes) paying the
same orders at once journal one attempt per payment under distinct nonces, and the exchange
credits each payment once."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path

from eth_account import Account
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.devnet.exchange.deployment import perps_document
from crossfill.kinds.payment_outcomes import Paid, Pending
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS, PerpsExchangeConfig
from crossfill.kinds.perps.payer import PerpsPayer, PerpsPaymentOrder
from crossfill.store.db import session_factory
from crossfill.store.tables import PerpsPayment
from tests.unit.fake_exchange import FakeExchange
from tests.unit.worker_world import Clock

SOLVER = Account.create()
CONFIG = PerpsExchangeConfig.model_validate(
    {**perps_document(api_url="http://exchange.test"),
     "solver": {"address": SOLVER.address, "key": "env:UNUSED"}}
)  # fmt: skip


def _order(index: int, recipient: str) -> PerpsPaymentOrder:
    return PerpsPaymentOrder(
        purpose="fill", key=f"0x{index:064x}", destination=recipient,
        currency=PERPS_USDC_ADDRESS, amount=1_000_000, decimals=6,
    )  # fmt: skip


async def test_two_payers_at_once_credit_each_payment_once(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    clock = Clock()
    exchange = FakeExchange(tmp_path / "exchange.sqlite3", clock)
    exchange.fund_usd(SOLVER.address, 100)
    sessions = session_factory(engine)
    payers = [PerpsPayer(exchange, CONFIG, SOLVER, sessions, now=clock) for _ in range(2)]
    recipients = [Account.create().address for _ in range(5)]
    orders = [_order(index, recipient) for index, recipient in enumerate(recipients)]
    outcomes = await asyncio.gather(*(payer.pay(order) for order in orders for payer in payers))
    assert all(isinstance(outcome, Paid | Pending) for outcome in outcomes)
    for order in orders:  # whoever lost a race follows the winner's attempt to its credit
        assert isinstance(await payers[0].pay(order), Paid)
    async with sessions() as session:
        rows = list(await session.scalars(select(PerpsPayment)))
    assert sorted((row.payment_key, row.attempt, row.status) for row in rows) == sorted(
        (order.key, 1, "credited") for order in orders
    )
    assert len({row.nonce for row in rows}) == len(orders)
    for recipient in recipients:
        assert exchange.usd(recipient) == Decimal(1)
    assert exchange.usd(SOLVER.address) == 95
    await exchange.close()
