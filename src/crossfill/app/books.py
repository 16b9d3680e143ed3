"""The books of an EVM chain, reconciled with the chain: what the service owes (escrow owed to
users, deposits owed to the solver, app fees owed), what it earned and spent on gas, and each
Depository's and signing key's balance on chain against its books, to the wei
(`domain.books.reconcile`). The first reconciliation of an account opens it: its balance on
chain then is its opening balance."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain import books
from crossfill.domain.books import Difference
from crossfill.domain.deposit_log import DEPOSITORY, RECEIVER
from crossfill.errors import BadRequest, ChainError
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.config import ChainConfig
from crossfill.kinds.evm.port import EvmPort
from crossfill.metrics import Metrics
from crossfill.runtime import Runtime
from crossfill.store import books as ledger
from crossfill.store import deposits, rebalancing
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId

log = structlog.get_logger(__name__)

T = TypeVar("T")

# Chain reads are retried this many times, waiting these seconds between tries.
READ_RETRIES = (0.2, 0.5, 1.0)
# Books that moved while the chain was read are read again, at most this many times.
CONSISTENT_TRIES = 3


@dataclass(frozen=True)
class Holding:
    """One account of the books that holds money on chain: its address and what it holds."""

    account: str
    address: str
    currencies: tuple[str, ...]


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


@dataclass(frozen=True)
class ChainBooks:
    chain_id: int
    currencies: tuple[CurrencyBooks, ...]
    reconciled: tuple[Reconciled, ...]

    @property
    def unexplained(self) -> tuple[Reconciled, ...]:
        return tuple(row for row in self.reconciled if row.found.unexplained != 0)


def holdings(config: ChainConfig, solver: str, keys: Sequence[str]) -> list[Holding]:
    """What is reconciled on the chain: its Depository and the solver key in every currency
    it serves, and every other key that sent a journalled transaction there in its gas
    currency."""
    currencies = tuple(currency.address.lower() for currency in config.currencies)
    found = [
        Holding(books.DEPOSITORY, config.contracts.depository.lower(), currencies),
        Holding(books.key_account(solver), solver.lower(), currencies),
    ]
    found += [
        Holding(books.key_account(key), key, (NATIVE_EVM_ADDRESS,))
        for key in keys
        if key != solver.lower()
    ]
    return found


async def read_on_chain(port: EvmPort, holding: Holding) -> dict[str, int]:
    """The holding's balance in each of its currencies, at the chain's head (retried while the
    chain fails; its last failure raised)."""
    tokens = [currency for currency in holding.currencies if currency != NATIVE_EVM_ADDRESS]
    poll = await _retried(lambda: port.poll(holding.address, tokens, []))
    balances = dict(zip(tokens, poll.token_balances, strict=True))
    balances[NATIVE_EVM_ADDRESS] = poll.native_balance
    return {currency: balances[currency] for currency in holding.currencies}


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
    balances: ledger.Balances
    seen: dict[tuple[str, str], int]
    in_flight: dict[str, int]
    depository_in_flight: int
    last_entry: int
    # Currency -> what the rebalancer's moves sent toward the chain will bring.
    arriving: dict[str, int]
    # The last block the indexer has read the chain's deposits through (None: not yet).
    indexed_through: int | None


async def _snapshot(session: AsyncSession, chain_id: int, solver: str) -> _Snapshot:
    in_flight = await ledger.in_flight_senders(session, chain_id)
    fills = await ledger.fills_in_flight(session, chain_id)
    if fills:
        in_flight[solver.lower()] = in_flight.get(solver.lower(), 0) + fills
    return _Snapshot(
        await ledger.balances(session, chain_id),
        await ledger.seen_unconfirmed(session, chain_id),
        in_flight,
        await ledger.payouts_in_flight(session, chain_id) + sum(in_flight.values()),
        await ledger.last_entry(session),
        (await rebalancing.in_transit(session)).get(chain_id, {}),
        None if (indexed := await deposits.cursor(session, chain_id)) is None
        else indexed.block_number,
    )  # fmt: skip


def _seen_by(
    holding: Holding, seen: dict[tuple[str, str], int], solver: str
) -> Callable[[str], int]:
    def seen_in(currency: str) -> int:
        if holding.account == books.DEPOSITORY:
            return seen.get((currency, DEPOSITORY), 0)
        if holding.address == solver.lower():
            return seen.get((currency, RECEIVER), 0)
        return 0

    return seen_in


async def reconcile_chain(
    sessions: async_sessionmaker[AsyncSession],
    port: EvmPort,
    config: ChainConfig,
    solver: str,
    *,
    now: Callable[[], datetime],
) -> ChainBooks:
    """The chain's books against the chain, opening the accounts not yet opened."""
    async with sessions() as session:
        keys = await ledger.senders(session, config.id)
    held = holdings(config, solver, keys)
    for _ in range(CONSISTENT_TRIES):
        async with sessions() as session:
            before = await _snapshot(session, config.id, solver)
        on_chain = [await read_on_chain(port, holding) for holding in held]
        # The reads were at this block or before it: past the indexer's, deposits may be unread.
        read_by = (await _retried(port.head)).number
        async with sessions() as session, session.begin():
            after = await _snapshot(session, config.id, solver)
            if after.last_entry != before.last_entry:
                continue  # the books moved while the chain was read: read both again
            if await _open(session, config, held, on_chain, after, solver, now()):
                # Read again: what this opened, or what another reconciliation opened first.
                after = await _snapshot(session, config.id, solver)
        return _report(config, held, on_chain, after, solver, read_by)
    log.info("books kept moving while read: reconciled at the last read", chain_id=config.id)
    async with sessions() as session:
        snapshot = await _snapshot(session, config.id, solver)
    return _report(config, held, on_chain, snapshot, solver, read_by)


async def _open(
    session: AsyncSession,
    config: ChainConfig,
    held: Sequence[Holding],
    on_chain: Sequence[dict[str, int]],
    snapshot: _Snapshot,
    solver: str,
    now: datetime,
) -> bool:
    """Open each account not opened yet, at its balance on chain less what the books hold of
    it already and the deposits seen (taken once confirmed); not while transactions that
    may move it are in flight. True when one was not open as the snapshot read it."""
    tried = False
    for holding, balances in zip(held, on_chain, strict=True):
        moving = _in_flight(holding, snapshot)
        seen_in = _seen_by(holding, snapshot.seen, solver)
        for currency, balance in balances.items():
            if moving or await ledger.opened(session, config.id, currency, holding.account):
                continue
            tried = True
            booked = snapshot.balances.get((config.id, currency, holding.account), 0)
            opening = balance - booked - seen_in(currency)
            if not await ledger.open_account(
                session, config.id, currency, holding.account, opening, now=now
            ):
                continue  # opened meanwhile by another reconciliation
            log.info(
                "books opened", chain_id=config.id, account=holding.account,
                currency=currency, opening=str(opening),
            )  # fmt: skip
    return tried


def _takes_deposits(holding: Holding, solver: str) -> bool:
    """The Depository, and the solver key (a v1 deposit is paid to it through the Receiver)."""
    return holding.account == books.DEPOSITORY or holding.address == solver.lower()


def _in_flight(holding: Holding, snapshot: _Snapshot) -> bool:
    if holding.account == books.DEPOSITORY:
        return snapshot.depository_in_flight > 0
    return snapshot.in_flight.get(holding.address, 0) > 0


def _report(
    config: ChainConfig,
    held: Sequence[Holding],
    on_chain: Sequence[dict[str, int]],
    snapshot: _Snapshot,
    solver: str,
    read_by: int,
) -> ChainBooks:
    """`read_by`: the chain's head once its balances were read (each read at it or before)."""
    behind = snapshot.indexed_through is None or snapshot.indexed_through < read_by

    def balance(currency: str, account: str) -> int:
        return snapshot.balances.get((config.id, currency, account), 0)

    def symbol(currency: str) -> str:
        found = config.currency(currency)
        return found.symbol if found is not None else currency

    reconciled = []
    for holding, balances in zip(held, on_chain, strict=True):
        seen_in = _seen_by(holding, snapshot.seen, solver)
        for currency, found in balances.items():
            reconciled.append(
                Reconciled(
                    holding.account,
                    holding.address,
                    currency,
                    symbol(currency),
                    books.reconcile(
                        found,
                        balance(currency, holding.account),
                        seen=seen_in(currency),
                        in_flight=_in_flight(holding, snapshot),
                        arriving=snapshot.arriving.get(currency, 0)
                        + max(0, balance(currency, books.IN_TRANSIT))
                        if holding.address == solver.lower()
                        else 0,
                        unread=behind and _takes_deposits(holding, solver),
                    ),
                )
            )
    currencies = tuple(
        CurrencyBooks(
            currency=currency.address.lower(),
            symbol=currency.symbol,
            owed_to_users=-balance(currency.address.lower(), books.OWED_TO_USERS),
            owed_to_solver=-balance(currency.address.lower(), books.OWED_TO_SOLVER),
            app_fees_owed=-balance(currency.address.lower(), books.APP_FEES_OWED),
            fees_earned=-sum(
                balance(currency.address.lower(), account) for account in books.EARNINGS
            ),
            gas_spent=balance(currency.address.lower(), books.GAS),
            in_transit=balance(currency.address.lower(), books.IN_TRANSIT),
            arriving=snapshot.arriving.get(currency.address.lower(), 0),
        )
        for currency in config.currencies
    )
    return ChainBooks(config.id, currencies, tuple(reconciled))


def export(metrics: Metrics, config: ChainConfig, found: ChainBooks, solver: str) -> None:
    """The chain's books as Prometheus series, and a warning for each unexplained difference."""

    def whole(currency: str, amount: int) -> float:
        known = config.currency(currency)
        decimals = known.decimals if known is not None else 0
        return amount / float(10**decimals)

    for row in found.currencies:
        labels = (config.id, row.symbol)
        metrics.books_owed_to_users.labels(*labels).set(whole(row.currency, row.owed_to_users))
        metrics.books_owed_to_solver.labels(*labels).set(whole(row.currency, row.owed_to_solver))
        metrics.books_app_fees_owed.labels(*labels).set(whole(row.currency, row.app_fees_owed))
        metrics.books_fees_earned.labels(*labels).set(whole(row.currency, row.fees_earned))
        metrics.books_gas_spent.labels(*labels).set(whole(row.currency, row.gas_spent))
        metrics.books_in_transit.labels(*labels).set(whole(row.currency, row.in_transit))
    unexplained_by: dict[tuple[str, str], float] = defaultdict(float)
    for held in found.reconciled:
        unexplained = held.found.unexplained
        unexplained_by[(_account_label(held, solver), held.symbol)] += whole(
            held.currency, unexplained
        )
        if unexplained:
            log.warning(
                "books and chain disagree: unexplained difference",
                chain_id=config.id,
                account=held.account,
                address=held.address,
                currency=held.symbol,
                on_chain=str(held.found.on_chain),
                booked=str(held.found.booked),
                unexplained=str(unexplained),
                cause=held.found.unexplained_cause,
            )
    for (account, symbol), amount in unexplained_by.items():
        metrics.books_unexplained.labels(config.id, account, symbol).set(amount)


def _account_label(held: Reconciled, solver: str) -> str:
    """A bounded label for the account (no address): the Depository, the solver key, or the
    service's other keys together."""
    if held.account == books.DEPOSITORY:
        return "depository"
    return "solver" if held.address == solver.lower() else "other_keys"


async def books_of(
    runtime: Runtime, chain_id: int | None, *, now: Callable[[], datetime]
) -> list[ChainBooks]:
    """Every EVM chain's books reconciled (or `chain_id`'s alone), their metrics exported."""
    chains = evm_chains(runtime)
    if chain_id is not None and chain_id not in chains:
        raise BadRequest(f"chainId {chain_id} is not an EVM chain of this deployment")
    chosen = [chains[ChainId(chain_id)]] if chain_id is not None else list(chains.values())
    solver = runtime.deployment.solver.address
    found = []
    for chain in chosen:
        report = await reconcile_chain(
            runtime.sessions, chain.client, chain.config, solver, now=now
        )
        export(runtime.metrics, chain.config, report, solver)
        found.append(report)
    return found


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
