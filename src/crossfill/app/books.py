"""The books of each chain, of every kind, reconciled with the chain: what the service owes
(escrow owed to users, deposits owed to the solver, app fees owed), what it earned and spent on
gas, and each account's balance on chain (a Depository, a signing key, the SVM vault, the
solver's exchange account) against its books, to the smallest unit
(`domain.books.reconcile`). The first reconciliation of an account opens it: its balance on
chain then is its opening balance. What a chain's kind answers is `kinds.books_port`'s."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain import books
from crossfill.domain.books import Difference
from crossfill.domain.deposit_log import DEPOSITORY, RECEIVER
from crossfill.errors import BadRequest, ChainError
from crossfill.kinds.books_port import BooksReader, Holding
from crossfill.metrics import Metrics
from crossfill.runtime import Runtime
from crossfill.store import books as ledger
from crossfill.store import rebalancing
from crossfill.types import ChainId

log = structlog.get_logger(__name__)

T = TypeVar("T")

# Chain reads are retried this many times, waiting these seconds between tries.
READ_RETRIES = (0.2, 0.5, 1.0)
# A chain is read again while the books of an account it holds moved as it was read (or its
# indexer had not read what it holds: `UNREAD_WAITS`), at most this many times in all.
CONSISTENT_TRIES = 5
# While a chain's indexer has not read the block its balances were read at, the chain is read
# again after these seconds (the indexer is normally right behind); then the difference is
# named for it.
UNREAD_WAITS = (0.1, 0.2, 0.3, 0.4)


@dataclass(frozen=True)
class Reconciled:
    account: str
    address: str
    currency: str
    symbol: str
    found: Difference


@dataclass(frozen=True)
class CurrencyBooks:
    currency: str
    symbol: str
    owed_to_users: int
    owed_to_solver: int
    app_fees_owed: int
    fees_earned: int
    gas_spent: int
    # Sent from this chain by the rebalancer's moves, not yet arrived (the `in_transit`
    # account); and what its moves sent toward this chain will bring.
    in_transit: int = 0
    arriving: int = 0
    # Taken from faded external solvers' bonds (part of `fees_earned`).
    fade_penalties: int = 0


@dataclass(frozen=True)
class ChainBooks:
    chain_id: int
    currencies: tuple[CurrencyBooks, ...]
    reconciled: tuple[Reconciled, ...]

    @property
    def unexplained(self) -> tuple[Reconciled, ...]:
        return tuple(row for row in self.reconciled if row.found.unexplained != 0)


async def read_on_chain(reader: BooksReader, holding: Holding) -> dict[str, int]:
    """The holding's balance in each of its currencies, read by its chain's kind (retried while
    the chain fails; its last failure raised)."""
    return await _retried(lambda: reader.read(holding))


async def _retried(read: Callable[[], Awaitable[T]]) -> T:
    """`read`'s answer, asked again while the chain fails; its last failure raised."""
    for wait in READ_RETRIES:
        try:
            return await read()
        except ChainError:
            await asyncio.sleep(wait)
    return await read()


@dataclass(frozen=True)
class _Snapshot:
    """The books of a chain read at one moment."""

    balances: ledger.Balances
    seen: dict[tuple[str, str], int]
    # Sender (lower-cased) -> its transactions (or payments to it) that may have moved its
    # balance on chain and are not yet settled in the books.
    in_flight: dict[str, int]
    depository_in_flight: int
    # Currency -> what the rebalancer's moves sent toward the chain will bring.
    arriving: dict[str, int]
    # (currency, account) of the accounts opened already.
    opened: frozenset[tuple[str, str]]

    def held(self, holding: Holding, reader: BooksReader) -> tuple[tuple[int, int, int], ...]:
        """What the books say of the holding, currency by currency: its balance, the deposits
        to it seen and not yet booked, and (the solver's) what is arriving."""
        seen_in = _seen_by(holding, self.seen, reader)
        solver = _is_solver(holding, reader)
        chain_id = reader.chain_id
        return tuple(
            (
                self.balances.get((chain_id, currency, holding.account), 0),
                seen_in(currency),
                self.arriving.get(currency, 0) if solver else 0,
            )
            for currency in holding.currencies
        )

    def or_in_flight(self, other: _Snapshot) -> _Snapshot:
        """This moment's books, with what was in flight at either moment in flight: what was
        sent before the chain was read, or settled after, may have moved it."""
        senders = self.in_flight.keys() | other.in_flight.keys()
        return replace(
            self,
            in_flight={
                sender: max(self.in_flight.get(sender, 0), other.in_flight.get(sender, 0))
                for sender in senders
            },
            depository_in_flight=max(self.depository_in_flight, other.depository_in_flight),
        )


async def _snapshot(sessions: async_sessionmaker[AsyncSession], reader: BooksReader) -> _Snapshot:
    chain_id, solver = reader.chain_id, reader.solver.lower()
    async with sessions() as session, session.begin():
        await ledger.read_at_one_moment(session)
        in_flight = await ledger.in_flight_senders(session, chain_id)
        for recipient, count in (await ledger.repayments_in_flight_to(session, chain_id)).items():
            in_flight[recipient] = in_flight.get(recipient, 0) + count
        solver_moving = await ledger.fills_in_flight(session, chain_id)
        solver_moving += await reader.payments_in_flight(session)
        if solver_moving:
            in_flight[solver] = in_flight.get(solver, 0) + solver_moving
        return _Snapshot(
            await ledger.balances(session, chain_id),
            await ledger.seen_unconfirmed(session, chain_id),
            in_flight,
            await ledger.payouts_in_flight(session, chain_id) + sum(in_flight.values()),
            (await rebalancing.in_transit(session)).get(chain_id, {}),
            await ledger.opened_accounts(session, chain_id),
        )


def _is_solver(holding: Holding, reader: BooksReader) -> bool:
    return holding.address.lower() == reader.solver.lower()


def _seen_by(
    holding: Holding, seen: dict[tuple[str, str], int], reader: BooksReader
) -> Callable[[str], int]:
    def seen_in(currency: str) -> int:
        if holding.account == books.DEPOSITORY:
            return seen.get((currency, DEPOSITORY), 0)
        if _is_solver(holding, reader):
            return seen.get((currency, RECEIVER), 0)
        return 0

    return seen_in


@dataclass(frozen=True)
class _Read:
    """The chain read between two reads of its books."""

    on_chain: list[dict[str, int]]
    books: _Snapshot
    # The holdings whose books moved while the chain was read.
    moved: frozenset[str]
    # Deposits may have reached the chain that its indexer had not read.
    unread: bool


async def _read_between(
    sessions: async_sessionmaker[AsyncSession], reader: BooksReader, held: Sequence[Holding]
) -> _Read:
    before = await _snapshot(sessions, reader)
    on_chain = list(await asyncio.gather(*(read_on_chain(reader, holding) for holding in held)))
    # Asked before the books are read again: what the indexer had read by then is in them.
    unread = await _retried(lambda: reader.unread(sessions))
    after = await _snapshot(sessions, reader)
    moved = frozenset(
        holding.account
        for holding in held
        if before.held(holding, reader) != after.held(holding, reader)
    )
    return _Read(on_chain, after.or_in_flight(before), moved, unread)


async def reconcile_chain(
    sessions: async_sessionmaker[AsyncSession],
    reader: BooksReader,
    *,
    now: Callable[[], datetime],
) -> ChainBooks:
    """The chain's books against the chain, opening the accounts not yet opened. The chain is
    read between two reads of the books; an account whose books moved meanwhile is read
    again, and one still moving after `CONSISTENT_TRIES` is reported as in flight (the next
    reconciliation says it to the wei), never as a difference nothing explains."""
    async with sessions() as session:
        held = await reader.holdings(session)
    unread_waits = iter(UNREAD_WAITS)
    for _ in range(CONSISTENT_TRIES):
        read = await _read_between(sessions, reader, held)
        if read.unread and (wait := next(unread_waits, None)) is not None:
            await asyncio.sleep(wait)  # the indexer is normally right behind: read again
            continue
        if not read.moved:
            break
    if read.moved:
        log.info(
            "books kept moving while read: reported in flight",
            chain_id=reader.chain_id, accounts=sorted(read.moved),
        )  # fmt: skip
    async with sessions() as session, session.begin():
        opened = await _open(session, reader, held, read, now())
    if opened:
        # Read again: what this opened, or what another reconciliation opened first.
        read = replace(read, books=(await _snapshot(sessions, reader)).or_in_flight(read.books))
    return _report(reader, held, read)


async def _open(
    session: AsyncSession,
    reader: BooksReader,
    held: Sequence[Holding],
    read: _Read,
    now: datetime,
) -> bool:
    """Open each account not opened yet, at its balance on chain less what the books hold of
    it already and the deposits seen (taken once confirmed); not while transactions that
    may move it are in flight, nor, for an account deposits are paid into, while its indexer
    may not have read them, nor, for the solver's, while the rebalancer's moves toward it or
    from it are unsettled in the currency (what they bring or pay back would be in its
    opening, then posted again). True when one was not open as the books were read."""
    tried = False
    chain_id, snapshot = reader.chain_id, read.books
    for holding, balances in zip(held, read.on_chain, strict=True):
        moving = _in_flight(holding, read) or (read.unread and holding.takes_deposits)
        seen_in = _seen_by(holding, snapshot.seen, reader)
        solver = _is_solver(holding, reader)
        for currency, balance in balances.items():
            if moving or (currency.lower(), holding.account) in snapshot.opened:
                continue
            if solver and _moves_unsettled(snapshot, chain_id, currency):
                continue
            tried = True
            booked = snapshot.balances.get((chain_id, currency, holding.account), 0)
            opening = balance - booked - seen_in(currency)
            if not await ledger.open_account(
                session, chain_id, currency, holding.account, opening, now=now
            ):
                continue  # opened meanwhile by another reconciliation
            log.info(
                "books opened", chain_id=chain_id, account=holding.account,
                currency=currency, opening=str(opening),
            )  # fmt: skip
    return tried


def _moves_unsettled(snapshot: _Snapshot, chain_id: int, currency: str) -> bool:
    """The rebalancer's moves toward the chain, or from it, hold some of `currency` not yet
    booked as arrived or paid back."""
    in_transit = snapshot.balances.get((chain_id, currency, books.IN_TRANSIT), 0)
    return snapshot.arriving.get(currency, 0) > 0 or in_transit != 0


def _in_flight(holding: Holding, read: _Read) -> bool:
    """Whether something not settled in the books may have moved the holding as read."""
    if holding.account in read.moved:
        return True
    if holding.account == books.DEPOSITORY:
        return read.books.depository_in_flight > 0
    return read.books.in_flight.get(holding.address.lower(), 0) > 0


def _report(reader: BooksReader, held: Sequence[Holding], read: _Read) -> ChainBooks:
    chain_id, snapshot = reader.chain_id, read.books
    symbols = {currency.key: currency.symbol for currency in reader.currencies()}

    def balance(currency: str, account: str) -> int:
        return snapshot.balances.get((chain_id, currency, account), 0)

    reconciled = []
    for holding, balances in zip(held, read.on_chain, strict=True):
        seen_in = _seen_by(holding, snapshot.seen, reader)
        solver = _is_solver(holding, reader)
        for currency, found in balances.items():
            reconciled.append(
                Reconciled(
                    holding.account,
                    holding.address,
                    currency,
                    symbols.get(currency, currency),
                    books.reconcile(
                        found,
                        balance(currency, holding.account),
                        seen=seen_in(currency),
                        in_flight=_in_flight(holding, read),
                        arriving=snapshot.arriving.get(currency, 0)
                        + max(0, balance(currency, books.IN_TRANSIT))
                        if solver
                        else 0,
                        unread=read.unread and holding.takes_deposits,
                        opened=(currency.lower(), holding.account) in snapshot.opened,
                    ),
                )
            )
    currencies = tuple(
        CurrencyBooks(
            currency=currency.key,
            symbol=currency.symbol,
            owed_to_users=-balance(currency.key, books.OWED_TO_USERS),
            owed_to_solver=-balance(currency.key, books.OWED_TO_SOLVER),
            app_fees_owed=-balance(currency.key, books.APP_FEES_OWED),
            fees_earned=-sum(balance(currency.key, account) for account in books.EARNINGS),
            gas_spent=balance(currency.key, books.GAS),
            in_transit=balance(currency.key, books.IN_TRANSIT),
            arriving=snapshot.arriving.get(currency.key, 0),
            fade_penalties=-balance(currency.key, books.FADE_PENALTIES),
        )
        for currency in reader.currencies()
    )
    return ChainBooks(chain_id, currencies, tuple(reconciled))


def export(metrics: Metrics, reader: BooksReader, found: ChainBooks) -> None:
    """The chain's books as Prometheus series, and a warning for each unexplained difference."""
    decimals = {currency.key: currency.decimals for currency in reader.currencies()}

    def whole(currency: str, amount: int) -> float:
        return amount / float(10 ** decimals.get(currency, 0))

    for row in found.currencies:
        labels = (found.chain_id, row.symbol)
        metrics.books_owed_to_users.labels(*labels).set(whole(row.currency, row.owed_to_users))
        metrics.books_owed_to_solver.labels(*labels).set(whole(row.currency, row.owed_to_solver))
        metrics.books_app_fees_owed.labels(*labels).set(whole(row.currency, row.app_fees_owed))
        metrics.books_fees_earned.labels(*labels).set(whole(row.currency, row.fees_earned))
        metrics.books_gas_spent.labels(*labels).set(whole(row.currency, row.gas_spent))
        metrics.books_in_transit.labels(*labels).set(whole(row.currency, row.in_transit))
    unexplained_by: dict[tuple[str, str], float] = defaultdict(float)
    for held in found.reconciled:
        unexplained = held.found.unexplained
        unexplained_by[(_account_label(held, reader), held.symbol)] += whole(
            held.currency, unexplained
        )
        if unexplained:
            log.warning(
                "books and chain disagree: unexplained difference",
                chain_id=found.chain_id,
                account=held.account,
                address=held.address,
                currency=held.symbol,
                on_chain=str(held.found.on_chain),
                booked=str(held.found.booked),
                unexplained=str(unexplained),
                cause=held.found.unexplained_cause,
            )
    for (account, symbol), amount in unexplained_by.items():
        metrics.books_unexplained.labels(found.chain_id, account, symbol).set(amount)


def _account_label(held: Reconciled, reader: BooksReader) -> str:
    """A bounded label for the account (no address): the Depository, the solver's account
    (its key, the SVM vault, its exchange account), or the service's other keys together."""
    if held.account == books.DEPOSITORY:
        return "depository"
    return "solver" if held.address.lower() == reader.solver.lower() else "other_keys"


def readers_of(runtime: Runtime, chain_id: int | None) -> list[BooksReader]:
    """The books' readers of every chain the deployment serves, of every kind (or
    `chain_id`'s alone: a 400 for a chain it does not serve)."""
    readers = {
        chain.chain_id: reader
        for chain in runtime.kind_chains.values()
        if (reader := chain.books()) is not None
    }
    if chain_id is None:
        return list(readers.values())
    if chain_id not in readers:
        raise BadRequest(f"chainId {chain_id} is not a chain of this deployment")
    return [readers[ChainId(chain_id)]]


async def books_of(
    runtime: Runtime, chain_id: int | None, *, now: Callable[[], datetime]
) -> list[ChainBooks]:
    """Every chain's books reconciled (or `chain_id`'s alone), their metrics exported."""
    readers = readers_of(runtime, chain_id)
    found = await asyncio.gather(
        *(reconcile_chain(runtime.sessions, reader, now=now) for reader in readers)
    )
    for reader, report in zip(readers, found, strict=True):
        export(runtime.metrics, reader, report)
    return list(found)


def books_wire(found: Sequence[ChainBooks]) -> dict[str, Any]:
    return {
        "chains": [
            {
                "chainId": chain.chain_id,
                "currencies": [
                    {
                        "currency": row.currency,
                        "symbol": row.symbol,
                        "owedToUsers": str(row.owed_to_users),
                        "owedToSolver": str(row.owed_to_solver),
                        "appFeesOwed": str(row.app_fees_owed),
                        "feesEarned": str(row.fees_earned),
                        "gasSpent": str(row.gas_spent),
                        "inTransit": str(row.in_transit),
                        "arriving": str(row.arriving),
                        "fadePenalties": str(row.fade_penalties),
                    }
                    for row in chain.currencies
                ],
                "reconciliation": [_reconciled_wire(row) for row in chain.reconciled],
            }
            for chain in found
        ],
        "unexplained": any(chain.unexplained for chain in found),
    }


def _reconciled_wire(row: Reconciled) -> dict[str, Any]:
    return {
        "account": row.account,
        "address": row.address,
        "currency": row.currency,
        "symbol": row.symbol,
        "onChain": str(row.found.on_chain),
        "booked": str(row.found.booked),
        "difference": str(row.found.difference),
        "explained": [
            {"cause": cause, "amount": str(amount)} for cause, amount in row.found.explained
        ],
        "unexplained": str(row.found.unexplained),
        "unexplainedCause": row.found.unexplained_cause,
    }
