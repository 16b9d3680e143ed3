"""A reconciliation while the books move, on SQLite and PostgreSQL: the chain is read between
two reads of the books, and an account whose books moved meanwhile is read again; one that
keeps moving is reported in flight, never as a difference nothing explains. A repayment mined
and not yet recorded has moved the solver's balance too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from crossfill.app import books as books_app
from crossfill.domain import books
from crossfill.domain.books import Posting
from crossfill.domain.rebalancing import SENT
from crossfill.kinds.books_port import BooksCurrency, Holding
from crossfill.store import books as ledger
from crossfill.store.db import session_factory
from crossfill.store.tables import RebalanceMove, Repayment
from crossfill.types import ChainId
from tests.integration.storage.test_books import _deposit

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
CHAIN = ChainId(900001)
NATIVE = "0x" + "00" * 20
SOLVER = "0x" + "50" * 20
KEY = books.key_account(SOLVER)
OPENING = 10_000


class MovingChain:
    """A chain holding only the solver's key, on which a payout to it lands just after its
    balance is read, on each of its first `moving_reads` reads, and is recorded at once: the
    books then hold more than that read found."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], moving_reads: int) -> None:
        self.sessions = sessions
        self.moving_reads = moving_reads
        self.reads = 0
        self.balance = OPENING

    @property
    def chain_id(self) -> ChainId:
        return CHAIN

    @property
    def solver(self) -> str:
        return SOLVER

    def currencies(self) -> Sequence[BooksCurrency]:
        return (BooksCurrency(NATIVE, "ETH", 18),)

    async def holdings(self, session: AsyncSession) -> list[Holding]:
        return [Holding(KEY, SOLVER, (NATIVE,))]

    async def read(self, holding: Holding) -> dict[str, int]:
        self.reads += 1
        found = self.balance
        if self.reads <= self.moving_reads:
            self.balance += 7
            async with self.sessions() as session, session.begin():
                await ledger.post(
                    session, f"payout-{self.reads}",
                    (Posting(CHAIN, NATIVE, KEY, 7), Posting(CHAIN, NATIVE, books.GAS, -7)),
                    now=NOW,
                )  # fmt: skip
        return {NATIVE: found}

    async def unread(self, sessions: async_sessionmaker[AsyncSession]) -> bool:
        return False

    async def payments_in_flight(self, session: AsyncSession) -> int:
        return 0


async def _opened(sessions: async_sessionmaker[AsyncSession]) -> None:
    async with sessions() as session, session.begin():
        assert await ledger.open_account(session, CHAIN, NATIVE, KEY, OPENING, now=NOW)


def _clock() -> Callable[[], datetime]:
    return lambda: NOW


async def test_books_that_moved_while_the_chain_was_read_are_read_again(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)
    await _opened(sessions)
    chain = MovingChain(sessions, moving_reads=2)
    found = await books_app.reconcile_chain(sessions, chain, now=_clock())
    (row,) = found.reconciled
    assert chain.reads == 3
    assert (row.found.on_chain, row.found.booked) == (OPENING + 14, OPENING + 14)
    assert row.found.difference == 0 and row.found.explained == ()


async def test_books_that_keep_moving_are_reported_in_flight_not_unexplained(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)
    await _opened(sessions)
    chain = MovingChain(sessions, moving_reads=books_app.CONSISTENT_TRIES)
    found = await books_app.reconcile_chain(sessions, chain, now=_clock())
    (row,) = found.reconciled
    assert chain.reads == books_app.CONSISTENT_TRIES
    assert row.found.difference == -7
    assert row.found.explained == ((books.IN_FLIGHT, -7),)
    assert row.found.unexplained == 0
    assert found.unexplained == ()


async def test_a_repayment_mined_and_not_recorded_explains_the_solvers_balance(
    engine: AsyncEngine,
) -> None:
    sessions = session_factory(engine)
    await _opened(sessions)
    async with sessions() as session, session.begin():
        deposit = await _deposit(session)
        session.add(
            Repayment(
                deposit_id=deposit.id, chain_id=CHAIN, request_id=deposit.request_id,
                currency=NATIVE, amount="500", recipient=SOLVER, batch="repay-1",
                state="sending", created_at=NOW,
            )
        )  # fmt: skip
    chain = MovingChain(sessions, moving_reads=0)
    chain.balance = OPENING + 500  # the repayment is mined; its record is not written yet
    found = await books_app.reconcile_chain(sessions, chain, now=_clock())
    (row,) = found.reconciled
    assert row.found.difference == 500
    assert row.found.explained == ((books.IN_FLIGHT, 500),)
    assert row.found.unexplained == 0


async def test_the_solvers_account_is_not_opened_while_a_move_toward_it_is_under_way(
    engine: AsyncEngine,
) -> None:
    """What the move brings may be on chain before the rebalancer books it: opened then, it
    would be in the opening and posted again. Until it settles the account is named not
    opened, not unexplained."""
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        session.add(
            RebalanceMove(
                origin_chain_id=900002, destination_chain_id=CHAIN, currency_in=NATIVE,
                currency_out=NATIVE, symbol="ETH", amount="600", amount_out="500",
                request_id="move-1", status=SENT, created_at=NOW, sent_at=NOW,
            )
        )  # fmt: skip
    chain = MovingChain(sessions, moving_reads=0)
    chain.balance = OPENING + 500  # arrived; not booked yet
    found = await books_app.reconcile_chain(sessions, chain, now=_clock())
    (row,) = found.reconciled
    assert row.found.explained == ((books.ARRIVING, 500), (books.NOT_OPENED, OPENING))
    assert row.found.unexplained == 0
    async with sessions() as session:
        assert await ledger.opened_accounts(session, CHAIN) == frozenset()
