"""Which deposited orders a kind's solver may pay now (`workers.kind_capacity`), judged from
the store on SQLite and PostgreSQL: payments sent (a fill `submitted`, or one journalled while
its request is still `pending`) are taken from the balance first, then the `pending` orders in
the order their deposits were accepted, one that does not fit passed over; and a fill paid by
this process stays counted off the balance until a read started after it."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.kinds.port import InventoryCurrency
from crossfill.kinds.svm.payments import SVM_PAYMENTS
from crossfill.kinds.timed_inventory import TimedInventory
from crossfill.store.db import session_factory
from crossfill.store.tables import Request, SvmPayment
from crossfill.workers.kind_capacity import PaidFrom
from tests.support.synthetic import synthetic_requests
from tests.unit.worker_world import START

CHAIN = 4242
USDC = "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q"
OTHER = "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"  # not among the reads


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _needs(currency: str, amount: int) -> dict[str, int]:
    return {currency: amount}


async def test_orders_are_judged_in_deposit_order_after_the_payments_sent(
    engine: AsyncEngine,
) -> None:
    rows = synthetic_requests(6, start=START).requests
    # (status, output, currency): accepted one second apart, in this order
    orders = [
        ("submitted", 20, USDC),  # sent: taken first
        ("pending", 30, USDC),  # journalled already: sent too, never judged again
        ("pending", 40, USDC),  # fits: 100 - 20 - 30 - 40 = 10 left
        ("pending", 15, USDC),  # does not fit: passed over
        ("pending", 10, USDC),  # fits what is left
        ("pending", 10**9, OTHER),  # a currency the reads do not show: not checked
    ]
    for index, (row, (status, amount, currency)) in enumerate(zip(rows, orders, strict=True)):
        row.update(
            destination_chain_id=CHAIN, status=status, destination_currency=currency,
            amount_out=str(amount), updated_at=START + timedelta(seconds=index),
        )  # fmt: skip
    ids = [row["id"] for row in rows]
    journalled = SvmPayment(
        chain_id=CHAIN, purpose="fill", payment_key=ids[1], attempt=1, status="signed",
        created_at=START, updated_at=START, recipient="r", currency=USDC, amount="30",
        signature="s" * 88, raw_transaction="", blockhash="b", last_valid_block_height=1,
    )  # fmt: skip
    async with engine.begin() as connection:
        await connection.execute(insert(Request), rows)
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        session.add(journalled)
    clock = Clock()
    inventory = TimedInventory([InventoryCurrency(USDC, "USDC", 6)], clock, key=str)
    paid_from = PaidFrom(inventory, SVM_PAYMENTS, _needs)
    async with sessions() as session:
        judged = await paid_from.judge(session, CHAIN)
    # Not read yet: nothing in USDC can be judged.
    assert judged.unknown == {USDC}
    inventory.read({USDC: 100}, started_at=1.0)
    async with sessions() as session:
        judged = await paid_from.judge(session, CHAIN)
    assert judged.unknown == set()
    assert judged.journalled == {ids[1]}
    assert judged.served == {ids[2], ids[4], ids[5]}
    assert judged.may_pay(ids[1]) and not judged.may_pay(ids[3])

    # The order of 40 is paid by this process and leaves the store's orders in flight; until
    # a read started after it, it is still counted off the balance read before.
    clock.now = 2.0
    paid_from.sending(ids[2], USDC, 40)
    paid_from.paid(ids[2])
    async with engine.begin() as connection:
        await connection.execute(
            update(Request).where(Request.id == ids[2]).values(status="success")
        )
    async with sessions() as session:
        judged = await paid_from.judge(session, CHAIN)
    assert judged.served == {ids[4], ids[5]}
    inventory.read({USDC: 60}, started_at=3.0)
    async with sessions() as session:
        judged = await paid_from.judge(session, CHAIN)
    assert judged.served == {ids[4], ids[5]}  # 60 - 20 - 30 = 10: the 15 still does not fit
    inventory.read({USDC: 65}, started_at=4.0)
    async with sessions() as session:
        judged = await paid_from.judge(session, CHAIN)
    assert judged.served == {ids[3], ids[5]}  # 15 fits first now, the 10 no longer does
