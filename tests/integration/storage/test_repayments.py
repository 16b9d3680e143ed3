"""Repayments in the store, on SQLite and PostgreSQL: which deposits are owed to the solver
(an accepted whole deposit in the Depository, confirmed, its request filled cross-chain,
neither refunded nor repaid), with their fills; a deposit is repaid at most once, and one
whose repayment started is never due for refund, nor one being refunded owed for repayment."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.repayments import REPAID, SENDING
from crossfill.domain.status import RequestStatus
from crossfill.store import app_fees, deposits, repayments
from crossfill.store.db import session_factory
from crossfill.store.tables import AppFee, Deposit, Repayment, Request, RequestTransaction
from tests.support.synthetic import synthetic_requests

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
ORIGIN, DESTINATION = 900001, 900002
NATIVE = "0x" + "00" * 20
SOLVER = "0x" + "50" * 20


async def _request(session: AsyncSession, index: int, **overrides: Any) -> str:
    (row,) = synthetic_requests(1, seed=index, start=NOW).requests
    row.update(
        {
            "status": RequestStatus.SUCCESS,
            "origin_chain_id": ORIGIN,
            "destination_chain_id": DESTINATION,
            "origin_currency": NATIVE,
            **overrides,
        }
    )
    await session.execute(insert(Request), [row])
    return str(row["id"])


async def _deposit(session: AsyncSession, index: int, request_id: str, **overrides: Any) -> int:
    row = Deposit(
        chain_id=ORIGIN, tx_hash="0x" + f"{index:064x}", log_index=0, part=deposits.WHOLE,
        block_number=10, block_hash="0x" + "bb" * 32, order_id="0x" + f"{index:064x}",
        depositor="0x" + "de" * 20, currency=NATIVE, amount="1000000", state=deposits.CONFIRMED,
        request_id=request_id, outcome=DepositVerdict.ACCEPTED, created_at=NOW,
    )  # fmt: skip
    for column, value in overrides.items():
        setattr(row, column, value)
    session.add(row)
    await session.flush()
    return row.id


async def _filled(session: AsyncSession, request_id: str, tx_hash: str, block: int) -> None:
    session.add(
        RequestTransaction(
            request_id=request_id,
            kind="fill",
            chain_id=DESTINATION,
            tx_hash=tx_hash,
            block_number=block,
            status="success",
            created_at=NOW,
        )
    )


def _repayment(deposit_id: int, request_id: str, *, state: str = SENDING) -> Repayment:
    return Repayment(
        deposit_id=deposit_id, chain_id=ORIGIN, request_id=request_id, currency=NATIVE,
        amount="1000000", recipient=SOLVER, batch=f"repay:{deposit_id}", state=state,
        created_at=NOW,
    )  # fmt: skip


async def test_only_filled_orders_unpaid_deposits_are_owed_to_the_solver(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        owed = await _request(session, 1)
        await _deposit(session, 1, owed)
        await _filled(session, owed, "0x" + "f1" * 32, 20)
        pending = await _request(session, 2, status=RequestStatus.PENDING)
        await _deposit(session, 2, pending)
        failed = await _request(session, 3, status=RequestStatus.FAILURE)
        await _deposit(session, 3, failed)
        unconfirmed = await _request(session, 4)
        await _deposit(session, 4, unconfirmed, state=deposits.SEEN)
        same_chain = await _request(session, 5, destination_chain_id=ORIGIN)
        await _deposit(session, 5, same_chain)
        receiver = await _request(session, 6)
        await _deposit(session, 6, receiver, paid_to="receiver")
        refunding = await _request(session, 7)
        await _deposit(session, 7, refunding, refund_status="submitted")
        repaid = await _request(session, 8)
        repaid_deposit = await _deposit(session, 8, repaid)
        session.add(_repayment(repaid_deposit, repaid, state=REPAID))
    async with sessions() as session:
        (found,) = await repayments.owed_on(session, ORIGIN, destinations=[DESTINATION], limit=10)
        assert (found.request_id, found.destination_chain_id) == (owed, DESTINATION)
        assert [(fill.tx_hash, fill.block_number) for fill in found.fills] == [
            ("0x" + "f1" * 32, 20)
        ]
        assert (
            await repayments.owed_on(
                session, DESTINATION, destinations=[ORIGIN, DESTINATION], limit=10
            )
            == []
        )
        # An order filled on a chain this process does not serve is not listed.
        assert await repayments.owed_on(session, ORIGIN, destinations=[ORIGIN], limit=10) == []


async def test_a_deposit_is_repaid_once_and_then_never_due_for_refund(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        request_id = await _request(session, 1, status=RequestStatus.FAILURE)
        # Accepted for a request that then failed: due for refund, until a repayment started.
        deposit_id = await _deposit(session, 1, request_id)
    async with sessions() as session, session.begin():
        assert [d.id for d in await deposits.due_for_refund(session, ORIGIN)] == [deposit_id]
        session.add(_repayment(deposit_id, request_id))
    async with sessions() as session:
        assert await deposits.due_for_refund(session, ORIGIN) == []
        assert await deposits.refunds_due_counts(session) == {}
    with pytest.raises(IntegrityError):
        async with sessions() as session, session.begin():
            session.add(_repayment(deposit_id, request_id))


async def test_a_deposit_still_owed_is_told_in_the_transaction_that_starts_its_repayment(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        request_id = await _request(session, 1)
        deposit_id = await _deposit(session, 1, request_id)
    async with sessions() as session, session.begin():
        assert await repayments.still_owed(session, deposit_id)
        deposit = await session.get(Deposit, deposit_id)
        assert deposit is not None
        deposit.refund_status = "submitted"
    async with sessions() as session, session.begin():
        assert not await repayments.still_owed(session, deposit_id)


async def test_the_solver_is_not_owed_the_app_fees_a_deposit_carried(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        request_id = await _request(session, 1)
        deposit_id = await _deposit(session, 1, request_id)
        shares = [(ORIGIN, NATIVE, "3000", app_fees.OWED), (ORIGIN, NATIVE, "500", app_fees.PAID)]
        shares += [
            (ORIGIN, NATIVE, "700", app_fees.VOID),
            (DESTINATION, NATIVE, "9", app_fees.OWED),
        ]
        for chain_id, currency, amount, state in shares:
            session.add(
                AppFee(
                    request_id=request_id,
                    recipient=SOLVER,
                    chain_id=chain_id,
                    currency=currency,
                    bps=10,
                    quoted_amount=amount,
                    actual_amount=amount,
                    amount_usd_micros=1,
                    state=state,
                    updated_at=NOW,
                )
            )
    async with sessions() as session:
        deposit = await session.get(Deposit, deposit_id)
        assert deposit is not None
        assert sorted(await app_fees.app_fee_shares(session, deposit)) == [500, 3000]


async def test_repayments_on_their_way_are_listed_by_batch(engine: AsyncEngine) -> None:
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        rows = []
        for index in range(1, 4):
            request_id = await _request(session, index)
            rows.append(_repayment(await _deposit(session, index, request_id), request_id))
        rows[1].batch = rows[0].batch
        rows[2].state = REPAID
        session.add_all(rows)
    async with sessions() as session:
        batches = await repayments.sending_batches(session, ORIGIN)
    assert [[row.deposit_id for row in batch] for batch in batches] == [
        [rows[0].deposit_id, rows[1].deposit_id]
    ]
