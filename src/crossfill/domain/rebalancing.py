"""Rebalancing the solver's inventory between chains (pure): which moves to make, how much,
and which chains have their repayments sent at once. `kinds.evm.rebalancer` carries it out.

Per (chain, currency) the solver's **virtual balance** is what it will hold there once what is
already on its way lands: free (balance - committed to orders in flight) + in transit toward
the chain (moves sent and not yet arrived) + owed to the solver there (deposits of filled
orders, repaid on that chain). Each (chain, currency) with a target has three levels, in the
smallest unit: `minimum`, `target`, `maximum`.

- **A chain below its minimum** is refilled up to its target: from the chain of the same
  currency (matched by symbol) with the most surplus (virtual balance - target, and no more
  than its free balance beyond its minimum: what can leave now, its gas left), the amount
  min(deficit to target, surplus).
- **A chain above its maximum** sends its surplus over target to the chain most below its
  target.
- **One move at a time per (chain, currency)**: a chain with a move toward it or out of it
  not yet ended is neither refilled nor drained again until the move ends (its in transit is
  counted in its virtual balance meanwhile), so nothing is ever sent twice for one dip.
- **Repayment steering**: a chain whose inventory without its repayments (free + in transit)
  is below its target has what it is owed repaid at once, whatever the repayment batch rules
  say (`steered`): repayment, which costs no bridge fee, comes first; the rebalancer bridges
  only the deficit the owed deposits cannot cover, since they count in the virtual balance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

# What became of a move (`rebalance_moves.status`).
QUOTED = "quoted"
SENT = "sent"
ARRIVED = "arrived"
REFUNDED = "refunded"
FAILED = "failed"
UNDER_WAY = (QUOTED, SENT)
ENDED = (ARRIVED, REFUNDED, FAILED)


@dataclass(frozen=True)
class Levels:
    """A (chain, currency)'s minimum, target and maximum, in the smallest unit."""

    minimum: int
    target: int
    maximum: int

    @classmethod
    def of_units(cls, minimum: Decimal, target: Decimal, maximum: Decimal, decimals: int) -> Levels:
        """Levels given in whole units of a currency of `decimals`."""
        scale = Decimal(10) ** decimals
        return cls(int(minimum * scale), int(target * scale), int(maximum * scale))


@dataclass(frozen=True)
class Position:
    """The solver's inventory of one currency on one chain, as the rebalancer sees it."""

    chain_id: int
    currency: str
    symbol: str
    free: int
    in_transit: int
    owed: int
    levels: Levels

    @property
    def virtual(self) -> int:
        return self.free + self.in_transit + self.owed

    @property
    def place(self) -> tuple[int, str]:
        return (self.chain_id, self.currency.lower())

    @property
    def surplus(self) -> int:
        """What may leave for another chain: above the target, and free now beyond the
        minimum (owed deposits are not in the wallet yet, and the minimum left pays for the
        move's own gas)."""
        return max(0, min(self.virtual - self.levels.target, self.free - self.levels.minimum))


@dataclass(frozen=True)
class PlannedMove:
    origin: Position
    destination: Position
    amount: int


def steered(position: Position) -> bool:
    """Whether the chain's owed repayments go at once: its inventory without them is below its
    target."""
    return position.free + position.in_transit < position.levels.target


def planned_moves(
    positions: Iterable[Position], busy: Iterable[tuple[int, str]]
) -> list[PlannedMove]:
    """The moves to start now. `busy`: the (chain, currency) places with a move toward them or
    out of them not yet ended (neither refilled nor drained again meanwhile)."""
    taken = {(chain_id, currency.lower()) for chain_id, currency in busy}
    by_symbol: dict[str, list[Position]] = {}
    for position in positions:
        by_symbol.setdefault(position.symbol, []).append(position)
    moves: list[PlannedMove] = []
    for group in by_symbol.values():
        moves += _moves_of(group, taken)
    return moves


def _moves_of(group: Sequence[Position], taken: set[tuple[int, str]]) -> list[PlannedMove]:
    moves: list[PlannedMove] = []
    free = [position for position in group if position.place not in taken]
    short = sorted(
        (p for p in free if p.virtual < p.levels.minimum),
        key=lambda p: (p.virtual - p.levels.target, p.chain_id),
    )
    for destination in short:
        move = _refill(destination, free, taken)
        if move is not None:
            moves.append(move)
    over = sorted(
        (p for p in free if p.virtual > p.levels.maximum and p.place not in taken),
        key=lambda p: (-(p.virtual - p.levels.maximum), p.chain_id),
    )
    for origin in over:
        below = [
            p for p in free if p.place not in taken and p.virtual < p.levels.target and p != origin
        ]
        if not below or origin.surplus <= 0:
            continue
        destination = min(below, key=lambda p: (p.virtual - p.levels.target, p.chain_id))
        amount = min(destination.levels.target - destination.virtual, origin.surplus)
        moves.append(PlannedMove(origin, destination, amount))
        taken |= {origin.place, destination.place}
    return moves


def _refill(
    destination: Position, group: Sequence[Position], taken: set[tuple[int, str]]
) -> PlannedMove | None:
    if destination.place in taken:
        return None
    sources = [
        p for p in group if p.place not in taken and p.place != destination.place and p.surplus > 0
    ]
    if not sources:
        return None
    origin = max(sources, key=lambda p: (p.surplus, -p.chain_id))
    amount = min(destination.levels.target - destination.virtual, origin.surplus)
    taken |= {origin.place, destination.place}
    return PlannedMove(origin, destination, amount)


def fee_in_origin_units(amount: int, amount_out: int, decimals_in: int, decimals_out: int) -> int:
    """What the bridge kept of a move, in the origin currency's smallest unit: the amount sent
    less what arrived (scaled when the two chains give the currency different decimals)."""
    if decimals_in >= decimals_out:
        return amount - amount_out * int(10 ** (decimals_in - decimals_out))
    return amount - amount_out // int(10 ** (decimals_out - decimals_in))
