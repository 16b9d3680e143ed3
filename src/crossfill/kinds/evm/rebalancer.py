"""The rebalancer: keeps each (chain, currency) with levels in the deployment file
(`[[rebalancing.targets]]`) within them, by moving the solver's inventory between the EVM
chains through the bridge (`treasury.bridge.InventoryBridge`), as `domain.rebalancing` decides.

Every `interval_seconds`, in the one process holding the rebalancer's lease (a row of the
signer leases, chain 0, taken and renewed each tick; each new move's row is written fenced by
it, so two processes never start a move for one dip):

1. each move under way is followed: a `quoted` move (its quote stored before anything was
   sent: a crash between the two resumes here) is sent with its stored quote (the adapter's
   journal never signs a step twice); a `sent` move is asked its status until it arrives, is
   refunded, or fails;
2. the positions are read (free, owed: this process's inventory view; in transit: the moves
   sent), and each move the policy plans is quoted, stored `quoted`, then sent.

The bridge's `Unavailable` (it or a chain did not answer) leaves the move as it is, tried again
at later ticks with backoff, and shown (`crossfill_rebalance_unavailable`, the move's
`last_error`); only a refusal (the bridge's, or a revert of our transaction) ends a move, and a
move refused is not asked for again between the same chains for `refused_retry_seconds`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.config import RebalancingSettings, RebalancingTarget
from crossfill.domain.backoff import Backoff
from crossfill.domain.rebalance_health import MoveUnderWay, Silence, troubles
from crossfill.domain.rebalancing import (
    ARRIVED,
    FAILED,
    QUOTED,
    REFUNDED,
    SENT,
    Levels,
    PlannedMove,
    Position,
    fee_in_origin_units,
    planned_moves,
    steered,
)
from crossfill.errors import ChainError
from crossfill.kinds.evm.receipt_outcomes import paid_to
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.loops import run_every
from crossfill.metrics import Metrics
from crossfill.store import books, rebalancing, signer_leases
from crossfill.store.db import as_utc
from crossfill.store.tables import RebalanceMove
from crossfill.treasury.bridge import (
    Arrived,
    BridgeQuote,
    Failed,
    InventoryBridge,
    Move,
    Pending,
    Refunded,
    Refused,
    SentMove,
    Unavailable,
)
from crossfill.types import ChainId

log = structlog.get_logger(__name__)

# The rebalancer's lease: a signer-lease row no chain uses.
LEASE_CHAIN = 0
LEASE_NAME = "rebalancer"
# The longest wait between tries of a move the bridge (or a chain) does not answer.
RETRY_AT_MOST_SECONDS = 60.0

Route = tuple[int, int, str]  # origin, destination, symbol


@dataclass(eq=False)
class Rebalancer:
    chains: Mapping[ChainId, ChainRuntime]
    sessions: async_sessionmaker[AsyncSession]
    bridge: InventoryBridge
    settings: RebalancingSettings
    solver: str
    # This process among every other (the lease's holder) and how long the lease lasts.
    owner: str
    lease: timedelta
    now: Callable[[], datetime]
    metrics: Metrics
    clock: Callable[[], float] = time.monotonic
    # What the bridge's client is closed with when the worker stops.
    closing: Callable[[], Awaitable[None]] | None = None
    name = "rebalancer"
    _restarting: bool = True
    # Per move (or route, before its move exists): its backoff, and when it is tried again.
    _backoffs: dict[object, Backoff] = field(default_factory=dict)
    _retry_at: dict[object, float] = field(default_factory=dict)
    # A destination whose move arrived: busy until its balance is read past this block.
    _landing: dict[tuple[int, str], int] = field(default_factory=dict)
    # Per route the bridge (or a chain) does not answer for: since when (clock), and why.
    _silent_since: dict[Route, tuple[float, str]] = field(default_factory=dict)

    async def run(self) -> None:
        try:
            await run_every(self.name, self.tick, self.settings.interval_seconds)
        finally:
            if self.closing is not None:
                await self.closing()

    async def tick(self) -> None:
        token = await self._hold()
        if token is None:
            self._publish({})  # the process holding the lease shows what it finds
            return
        async with self.sessions() as session:
            moves = await rebalancing.under_way(session)
        for move in moves:
            if self._waiting(move.id):
                continue
            await self._follow(move)
        async with self.sessions() as session:
            moves = await rebalancing.under_way(session)
            since = self.now() - timedelta(seconds=self.settings.refused_retry_seconds)
            refused = await rebalancing.refused_since(session, since)
        busy = {
            place
            for move in moves
            for place in (
                (move.origin_chain_id, move.currency_in.lower()),
                (move.destination_chain_id, move.currency_out.lower()),
            )
        }
        busy |= self._still_landing()
        positions = self._positions(rebalancing.in_transit_of(moves))
        planned = planned_moves(positions, busy)
        self._show(positions, planned, moves, refused)
        for wanted in planned:
            route = _route(wanted)
            if route in refused or self._waiting(route):
                continue
            await self._start(wanted, route, token)

    def _show(
        self,
        positions: Sequence[Position],
        planned: Sequence[PlannedMove],
        moves: Sequence[RebalanceMove],
        refused: Mapping[Route, str],
    ) -> None:
        """What keeps each (chain, currency) from being refilled (`domain.rebalance_health`),
        on the chains' state (`/readyz`, `/chains`) and in the metrics."""
        now, clock = self.now(), self.clock()
        under_way = [
            MoveUnderWay(
                _route_of(move),
                (move.destination_chain_id, move.currency_out.lower()),
                move.status,
                (now - as_utc(move.sent_at or move.created_at)).total_seconds(),
            )
            for move in moves
        ]
        silent = {
            route: Silence(clock - since, reason)
            for route, (since, reason) in self._silent_since.items()
        }
        found = troubles(
            positions, planned, under_way, refused=refused, silent=silent,
            stalled_after_seconds=self.settings.stalled_after_seconds,
        )  # fmt: skip
        by_chain: dict[int, dict[str, str]] = {}
        for trouble in found:
            by_chain.setdefault(trouble.chain_id, {})[trouble.symbol] = trouble.text
        for position in positions:
            shown = position.symbol in by_chain.get(position.chain_id, {})
            self.metrics.rebalance_trouble.labels(str(position.chain_id), position.symbol).set(
                int(shown)
            )
        self._publish(by_chain)

    def _publish(self, by_chain: Mapping[int, dict[str, str]]) -> None:
        for chain_id, chain in self.chains.items():
            chain.state.rebalancing = dict(by_chain.get(chain_id, {}))

    async def _hold(self) -> int | None:
        """The lease's fencing token if this process holds (or now takes) it."""
        claim = self._claim()
        async with self.sessions() as session, session.begin():
            token = await signer_leases.take(session, claim, now=self.now())
        self._restarting = False
        return token

    def _claim(self) -> signer_leases.LeaseClaim:
        return signer_leases.LeaseClaim(
            LEASE_CHAIN, LEASE_NAME, self.owner, self.lease, restarting=self._restarting
        )

    def _positions(self, in_transit: Mapping[int, Mapping[str, int]]) -> list[Position]:
        """Each target's (chain, currency) whose balance has been read, as it stands now."""
        positions = []
        for target in self.settings.targets:
            chain = self.chains.get(ChainId(target.chain_id))
            transit = in_transit.get(target.chain_id, {}).get(target.currency.lower(), 0)
            position = None if chain is None else position_of(chain, target, transit)
            if position is not None:
                positions.append(position)
        return positions

    def _still_landing(self) -> set[tuple[int, str]]:
        """Destinations whose move arrived after their balance was last read."""
        for place, block in list(self._landing.items()):
            chain = self.chains.get(ChainId(place[0]))
            head = None if chain is None else chain.state.head
            if head is None or head.number > block:
                del self._landing[place]
        return set(self._landing)

    async def _start(self, planned: PlannedMove, route: Route, token: int) -> None:
        origin, destination = planned.origin, planned.destination
        move = Move(
            origin.chain_id, destination.chain_id, origin.currency, destination.currency,
            planned.amount,
        )  # fmt: skip
        outcome = await self.bridge.quote(move)
        if isinstance(outcome, Unavailable):
            self._unavailable(route, route, outcome.reason)
            return
        self._answered(route, route)
        now = self.now()
        row = RebalanceMove(
            origin_chain_id=origin.chain_id, destination_chain_id=destination.chain_id,
            currency_in=origin.currency, currency_out=destination.currency, symbol=origin.symbol,
            amount=str(planned.amount), created_at=now,
        )  # fmt: skip
        if isinstance(outcome, Refused):
            row.status, row.amount_out, row.ended_at = FAILED, "0", now
            row.reason = f"refused by the {outcome.by}: {outcome.code or ''} {outcome.reason}"[:300]
        else:
            row.status, row.request_id = QUOTED, outcome.request_id
            row.amount_out, row.quote = str(outcome.amount_out), outcome.document()
        async with self.sessions() as session, session.begin():
            if not await signer_leases.renew(session, self._claim(), token=token, now=now):
                return  # another process took the lease: it decides now
            session.add(row)
        self._logged(row, origin=origin.virtual, destination=destination.virtual)
        if row.status == QUOTED:
            await self._follow(row)
        else:
            self._count(row, FAILED)

    async def _follow(self, move: RebalanceMove) -> None:
        assert move.quote is not None
        quote = BridgeQuote.of_document(move.quote)
        if move.status == QUOTED:
            sent = await self.bridge.send(quote)
            if isinstance(sent, Unavailable):
                self._unavailable(move.id, _route_of(move), sent.reason)
                await self._note(move, sent.reason)
                return
            self._answered(move.id, _route_of(move))
            if isinstance(sent, Refused):
                await self._end(move, FAILED, reason=f"refused by the {sent.by}: {sent.reason}")
                return
            await self._sent(move, sent)
            return
        status = await self.bridge.status(SentMove(quote, tuple(move.tx_hashes or ())))
        if isinstance(status, Pending):
            if status.stage == "unknown":
                self._unavailable(move.id, _route_of(move), status.detail)
                await self._note(move, status.detail)
            else:
                self._answered(move.id, _route_of(move))
            return
        self._answered(move.id, _route_of(move))
        if isinstance(status, Arrived):
            await self._end(move, ARRIVED, amount_out=status.amount)
        elif isinstance(status, Refunded):
            await self._refunded(move, status.tx_hashes)
        elif isinstance(status, Failed):
            await self._failed(move, status.reason)

    async def _sent(self, move: RebalanceMove, sent: SentMove) -> None:
        async with self.sessions() as session, session.begin():
            row = await session.get(RebalanceMove, move.id)
            assert row is not None
            row.status, row.tx_hashes = SENT, list(sent.tx_hashes)
            row.sent_at, row.last_error = self.now(), None
        move.status, move.tx_hashes = SENT, list(sent.tx_hashes)
        self._count(move, SENT)
        log.info(
            "rebalance move sent", move_id=move.id, request_id=move.request_id,
            tx_hashes=list(sent.tx_hashes),
        )  # fmt: skip

    async def _refunded(self, move: RebalanceMove, tx_hashes: Sequence[str]) -> None:
        """The bridge paid the deposit back on the origin: what its refund transactions paid
        the solver, read from their receipts there, is booked with the move's end. A receipt
        the origin does not answer (or does not have yet) leaves the move `sent`, tried again
        with backoff."""
        chain = self.chains.get(ChainId(move.origin_chain_id))
        if chain is None or not tx_hashes:
            # Nothing to read what it paid back from: booked as paid back nothing (the
            # solver key shows what came back unexplained, for the operator).
            log.warning(
                "a refunded move's refund not found on its origin: booked as nothing paid back",
                move_id=move.id, tx_hashes=list(tx_hashes),
            )  # fmt: skip
            reason = f"the bridge paid back 0 of {move.amount} (no refund transaction found)"
            await self._end(move, REFUNDED, reason=reason, refunded=0)
            return
        try:
            refunded = await refund_paid(chain, tx_hashes, move.currency_in, self.solver)
        except ChainError as exc:
            refunded, error = None, f"the origin chain did not answer for the refund: {exc}"
        else:
            error = "the refund's transaction is not on the origin's node yet"
        if refunded is None:
            self._unavailable(move.id, _route_of(move), error)
            await self._note(move, error)
            return
        reason = f"the bridge paid back {refunded} of {move.amount}"
        await self._end(move, REFUNDED, reason=reason, refunded=refunded)

    async def _failed(self, move: RebalanceMove, reason: str) -> None:
        """Our transaction reverted (nothing left the origin: the move ends), or the bridge
        failed its request after our deposit (its refund follows: the move waits for it)."""
        async with self.sessions() as session:
            deposited = await books.net_of(session, books.move_out_event(move))
        if not deposited:
            await self._end(move, FAILED, reason=reason)
            return
        await self._note(move, f"{reason}; waiting for the bridge's refund")

    async def _end(
        self, move: RebalanceMove, status: str, *, reason: str | None = None,
        amount_out: int | None = None, refunded: int | None = None,
    ) -> None:  # fmt: skip
        now = self.now()
        async with self.sessions() as session, session.begin():
            row = await session.get(RebalanceMove, move.id)
            assert row is not None
            row.status, row.ended_at, row.last_error = status, now, None
            row.reason = None if reason is None else reason[:300]
            if amount_out is not None:
                row.amount_out = str(amount_out)
                await books.rebalanced_in(session, row, self.solver, self._fee(row), now=now)
            if refunded is not None:
                await books.rebalance_refunded(session, row, self.solver, refunded, now=now)
            move = row
        if status == ARRIVED:
            chain = self.chains.get(ChainId(move.destination_chain_id))
            head = None if chain is None else chain.state.head
            place = (move.destination_chain_id, move.currency_out.lower())
            self._landing[place] = -1 if head is None else head.number
        self._count(move, status)
        self._logged(move)

    def _fee(self, move: RebalanceMove) -> int:
        decimals = []
        for chain_id, currency in (
            (move.origin_chain_id, move.currency_in),
            (move.destination_chain_id, move.currency_out),
        ):
            chain = self.chains.get(ChainId(chain_id))
            found = None if chain is None else chain.config.currency(currency)
            decimals.append(18 if found is None else found.decimals)
        return fee_in_origin_units(int(move.amount), int(move.amount_out), *decimals)

    async def _note(self, move: RebalanceMove, error: str) -> None:
        """Why the move could not go on at this try (shown until it does)."""
        async with self.sessions() as session, session.begin():
            row = await session.get(RebalanceMove, move.id)
            if row is not None:
                row.last_error = error[:300]

    def _waiting(self, key: object) -> bool:
        retry_at = self._retry_at.get(key)
        return retry_at is not None and self.clock() < retry_at

    def _unavailable(self, key: object, route: Route, reason: str) -> None:
        backoff = self._backoffs.setdefault(
            key,
            Backoff(
                base_seconds=self.settings.interval_seconds,
                cap_seconds=max(self.settings.interval_seconds, RETRY_AT_MOST_SECONDS),
            ),
        )
        delay = backoff.failed()
        self._retry_at[key] = self.clock() + delay
        since = self._silent_since.get(route, (self.clock(), reason))[0]
        self._silent_since[route] = (since, reason)
        self.metrics.rebalance_unavailable.labels(*_labels(route)).set(1)
        if backoff.worth_logging:
            log.warning(
                "the bridge or a chain does not answer for a move; tried again",
                route=route, failures=backoff.failures, retry_in_seconds=round(delay, 1),
                reason=reason,
            )  # fmt: skip

    def _answered(self, key: object, route: Route) -> None:
        self._backoffs.pop(key, None)
        self._retry_at.pop(key, None)
        self._silent_since.pop(route, None)
        self.metrics.rebalance_unavailable.labels(*_labels(route)).set(0)

    def _count(self, move: RebalanceMove, outcome: str) -> None:
        self.metrics.rebalance_moves.labels(*_labels(_route_of(move)), outcome).inc()

    def _logged(self, move: RebalanceMove, **extra: int) -> None:
        described = {
            "move_id": move.id, "status": move.status, "origin_chain_id": move.origin_chain_id,
            "destination_chain_id": move.destination_chain_id, "currency": move.symbol,
            "amount": move.amount, "amount_out": move.amount_out, "request_id": move.request_id,
            **extra,
        }  # fmt: skip
        if move.status == FAILED:
            log.error("rebalance move failed: not tried again", reason=move.reason, **described)
        else:
            log.info("rebalance move", reason=move.reason, **described)


def position_of(chain: ChainRuntime, target: RebalancingTarget, in_transit: int) -> Position | None:
    """The target's (chain, currency) as the chain's state has it (free, owed), with what is
    `in_transit` toward it; None while its balance is not read."""
    currency = chain.config.currency(target.currency)
    inventory = None if currency is None else chain.state.solver_inventory(currency.address)
    if currency is None or inventory is None:
        return None
    levels = Levels.of_units(target.minimum, target.target, target.maximum, currency.decimals)
    return Position(
        target.chain_id, currency.address, currency.symbol, inventory.free, in_transit,
        inventory.owed, levels,
    )  # fmt: skip


async def refund_paid(
    chain: ChainRuntime, tx_hashes: Sequence[str], currency: str, solver: str
) -> int | None:
    """What the bridge's refund transactions paid `solver` in `currency` on `chain` (their
    receipts' Depository payouts or token transfers); None while one is not on the node yet.
    Raises ChainError when the node does not answer."""
    paid = 0
    for tx_hash in tx_hashes:
        receipt = await chain.client.receipt(tx_hash)
        if receipt is None:
            return None
        if int(receipt["status"]) == 1:
            paid += paid_to(receipt["logs"], currency=currency, recipient=solver)
    return paid


def steered_currencies(chain: ChainRuntime, targets: Sequence[RebalancingTarget]) -> set[str]:
    """The chain's currencies (lower case) it is short of: its owed repayments go at once
    (`domain.rebalancing.steered`); in transit as the chain's state last read it."""
    found = set()
    for target in targets:
        if target.chain_id != chain.config.id:
            continue
        transit = chain.state.solver_in_transit.get(target.currency.lower(), 0)
        position = position_of(chain, target, transit)
        if position is not None and steered(position):
            found.add(target.currency.lower())
    return found


def _route(planned: PlannedMove) -> Route:
    return (planned.origin.chain_id, planned.destination.chain_id, planned.origin.symbol)


def _route_of(move: RebalanceMove) -> Route:
    return (move.origin_chain_id, move.destination_chain_id, move.symbol)


def _labels(route: Route) -> tuple[str, str, str]:
    return (str(route[0]), str(route[1]), route[2])
