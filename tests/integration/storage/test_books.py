"""The books in the store, on SQLite and PostgreSQL: a deposit posted once however often it is
judged, its reversal after a reorg and its posting again when it is found again; a fill moving
it to the solver less its app fees; gas posted once per transaction however often its receipt
is read; an account opened once though two transactions open it at the same time."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from crossfill.domain import books
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.status import RequestStatus
from crossfill.store import books as ledger
from crossfill.store import deposits
from crossfill.store.db import session_factory
from crossfill.store.tables import AppFee, Deposit, Request
from tests.support.synthetic import synthetic_requests

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
ORIGIN, DESTINATION = 900001, 900002
NATIVE = "0x" + "00" * 20
SOLVER = "0x" + "50" * 20
AMOUNT = 1_000_000


async def _deposit(session: AsyncSession) -> Deposit:
    (row,) = synthetic_requests(1, seed=7, start=NOW).requests
    row.update(
        status=RequestStatus.SUBMITTED, origin_chain_id=ORIGIN,
        destination_chain_id=DESTINATION, origin_currency=NATIVE, fill_plan=None,
    )  # fmt: skip
    await session.execute(insert(Request), [row])
    deposit = Deposit(
        chain_id=ORIGIN, tx_hash="0x" + "ab" * 32, log_index=3, part=deposits.WHOLE,
        block_number=10, block_hash="0x" + "bb" * 32, order_id="0x" + "01" * 32,
        depositor="0x" + "de" * 20, currency=NATIVE, amount=str(AMOUNT),
        state=deposits.CONFIRMED, request_id=row["id"], outcome=DepositVerdict.ACCEPTED,
        created_at=NOW,
    )  # fmt: skip
    session.add(deposit)
    await session.flush()
    return deposit


def _at(balances: ledger.Balances, account: str, chain_id: int = ORIGIN) -> int:
    return balances.get((chain_id, NATIVE, account), 0)


async def test_a_deposit_is_posted_once_reversed_by_a_reorg_and_posted_again(
    engine: AsyncEngine,
) -> None:
    async with session_factory(engine)() as session, session.begin():
        deposit = await _deposit(session)
        for _ in range(2):  # judged again: posted once
            await ledger.deposited(session, deposit, AMOUNT, books.DEPOSITORY, now=NOW)
        held = await ledger.balances(session)
        assert (_at(held, books.DEPOSITORY), _at(held, books.OWED_TO_USERS)) == (AMOUNT, -AMOUNT)

        await ledger.reverse(session, ledger.deposit_event(deposit), now=NOW)
        await ledger.reverse(session, ledger.deposit_event(deposit), now=NOW)  # nothing left
        gone = await ledger.balances(session)
        assert (_at(gone, books.DEPOSITORY), _at(gone, books.OWED_TO_USERS)) == (0, 0)

        await ledger.deposited(session, deposit, AMOUNT, books.DEPOSITORY, now=NOW)
        assert _at(await ledger.balances(session), books.DEPOSITORY) == AMOUNT


async def test_a_fill_owes_the_deposit_to_the_solver_less_its_app_fees(
    engine: AsyncEngine,
) -> None:
    async with session_factory(engine)() as session, session.begin():
        deposit = await _deposit(session)
        await ledger.deposited(session, deposit, AMOUNT, books.DEPOSITORY, now=NOW)
        fee = AppFee(
            request_id=deposit.request_id, recipient="0x" + "fe" * 20, chain_id=ORIGIN,
            currency=NATIVE, bps=30, quoted_amount="3000", amount_usd_micros=0, state="quoted",
            updated_at=NOW,
        )  # fmt: skip
        session.add(fee)
        request = await session.get(Request, deposit.request_id)
        assert request is not None
        request.status = RequestStatus.SUCCESS
        await ledger.follow_status(session, request, now=NOW)
        await ledger.follow_status(session, request, now=NOW)  # once
        held = await ledger.balances(session)
    assert _at(held, books.OWED_TO_USERS) == 0
    assert _at(held, books.OWED_TO_SOLVER) == -(AMOUNT - 3000)
    assert _at(held, books.APP_FEES_OWED) == -3000
    assert _at(held, books.DEPOSITORY) == AMOUNT


async def test_gas_is_posted_once_per_transaction(engine: AsyncEngine) -> None:
    async with session_factory(engine)() as session, session.begin():
        for _ in range(3):  # its receipt read again at each tick
            await ledger.gas_paid(
                session, DESTINATION, sender=SOLVER, tx_hash="0x" + "cd" * 32, fee=21_000, now=NOW
            )
        held = await ledger.balances(session, DESTINATION)
    assert _at(held, books.key_account(SOLVER), DESTINATION) == -21_000
    assert _at(held, books.GAS, DESTINATION) == 21_000


async def test_an_account_opened_by_two_transactions_at_once_is_opened_once(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)

    async def open_it() -> None:
        async with sessions() as session, session.begin():
            await ledger.open_account(
                session, ORIGIN, NATIVE, books.DEPOSITORY, 5 * AMOUNT, now=NOW
            )

    await asyncio.gather(open_it(), open_it())
    async with sessions() as session:
        held = await ledger.balances(session)
        assert await ledger.opened(session, ORIGIN, NATIVE, books.DEPOSITORY)
    assert (_at(held, books.DEPOSITORY), _at(held, books.OPENING)) == (5 * AMOUNT, -5 * AMOUNT)


async def test_an_account_found_empty_is_opened_at_zero(engine: AsyncEngine) -> None:
    async with session_factory(engine)() as session, session.begin():
        await ledger.open_account(session, ORIGIN, NATIVE, "key:" + SOLVER, 0, now=NOW)
        assert await ledger.opened(session, ORIGIN, NATIVE, "key:" + SOLVER)
        assert _at(await ledger.balances(session), "key:" + SOLVER) == 0


async def test_a_deposit_confirmed_after_its_fill_is_owed_to_the_solver_then(
    engine: AsyncEngine,
) -> None:
    """A fast fill: the order succeeds on the deposit seen, before it is final and posted."""
    async with session_factory(engine)() as session, session.begin():
        deposit = await _deposit(session)
        request = await session.get(Request, deposit.request_id)
        assert request is not None
        request.status = RequestStatus.SUCCESS
        await ledger.follow_status(session, request, now=NOW)
        assert await ledger.balances(session) == {}  # nothing of it in the books yet
        await ledger.deposited(session, deposit, AMOUNT, books.DEPOSITORY, now=NOW)
        held = await ledger.balances(session)
    assert _at(held, books.OWED_TO_USERS) == 0
    assert (_at(held, books.DEPOSITORY), _at(held, books.OWED_TO_SOLVER)) == (AMOUNT, -AMOUNT)


VAULT = "HXfmA1eFr4D2MqC44VeYAdS4NsJBbl5o1ufWZHjWvvXk"


async def test_a_deposit_into_a_solver_account_is_earned_at_its_fill_and_never_owed(
    engine: AsyncEngine,
) -> None:
    """A deposit paid into an account of the solver's own (the SVM vault, the solver's exchange
    account): no repayment follows, so its fill earns it at once and owes the solver nothing."""
    async with session_factory(engine)() as session, session.begin():
        deposit = await _deposit(session)
        await ledger.deposited(session, deposit, AMOUNT, books.key_account(VAULT), now=NOW)
        request = await session.get(Request, deposit.request_id)
        assert request is not None
        request.status = RequestStatus.SUCCESS
        await ledger.follow_status(session, request, now=NOW)
        held = await ledger.balances(session)
    assert _at(held, books.key_account(VAULT)) == AMOUNT
    assert _at(held, books.OWED_TO_USERS) == 0
    assert _at(held, books.OWED_TO_SOLVER) == 0
    assert _at(held, books.REPAID) == -AMOUNT


async def test_a_kinds_payments_are_posted_once_each(engine: AsyncEngine) -> None:
    """A fill and a refund paid from a solver account, each posted once however often its payer
    follows it; the fill under the same event as the request's own (nothing posted twice when
    the request then succeeds)."""
    async with session_factory(engine)() as session, session.begin():
        deposit = await _deposit(session)
        holder = books.key_account(VAULT)
        await ledger.deposited(session, deposit, AMOUNT, holder, now=NOW)
        fill = ledger.fill_books("0xrequest", DESTINATION, NATIVE, 700, VAULT)
        refund = ledger.refund_books(deposit, VAULT)
        for _ in range(2):
            await ledger.payment_paid(session, fill, now=NOW)
            await ledger.payment_paid(session, refund, now=NOW)
        held = await ledger.balances(session)
    assert _at(held, holder, DESTINATION) == -700
    assert _at(held, books.FILLED, DESTINATION) == 700
    assert _at(held, holder) == 0  # the deposit paid back whole
    assert _at(held, books.OWED_TO_USERS) == 0
    assert _at(held, books.REFUND_GAS_KEPT) == 0
