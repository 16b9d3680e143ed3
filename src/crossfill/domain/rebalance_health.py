"""What stands in the rebalancer's way, per (chain, currency) with levels (pure): shown on
`/readyz` (`checks.rebalancing`), in the chain's `/chains` status and as
`crossfill_rebalance_trouble`, so an operator learns that a chain will not be refilled before
its inventory runs out.

A (chain, currency) is in trouble when:

- **refused**: it is below its minimum and the move that would refill it was refused (by the
  bridge, or our transaction reverted) within `refused_retry_seconds`: nothing is asked for
  until then;
- **no surplus**: it is below its minimum and no chain of the same currency can spare
  anything (every other is at or below its target, or holds nothing free above its minimum);
- **unavailable**: the bridge (or a chain of the move) has not answered for a move toward it,
  or for the route that would refill it, for longer than `stalled_after_seconds`;
- **stalled**: a move toward it has been under way (quoted or sent, not arrived, refunded or
  failed) for longer than `stalled_after_seconds`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from crossfill.domain.rebalancing import PlannedMove, Position

# origin chain id, destination chain id, currency symbol
Route = tuple[int, int, str]


@dataclass(frozen=True)
class MoveUnderWay:
    """A move not yet ended, toward `destination` (chain id, lower-case currency)."""

    route: Route
    destination: tuple[int, str]
    status: str
    age_seconds: float


@dataclass(frozen=True)
class Silence:
    """The bridge (or a chain) has not answered for a route for `seconds`; `reason`: its last
    answer."""

    seconds: float
    reason: str


@dataclass(frozen=True)
class Trouble:
    """What keeps a (chain, currency) from being refilled, in words."""

    chain_id: int
    symbol: str
    text: str


def troubles(
    positions: Sequence[Position],
    planned: Iterable[PlannedMove],
    under_way: Iterable[MoveUnderWay],
    *,
    refused: Mapping[Route, str],
    silent: Mapping[Route, Silence],
    stalled_after_seconds: float,
) -> list[Trouble]:
    """Each position's trouble (at most one each, the first found in the order of the module's
    list), by chain id and symbol. `planned`: the moves the policy asks for now, before the
    routes refused or waiting are left out (`domain.rebalancing.planned_moves`); `refused`: the
    routes refused lately, with why; `silent`: the routes the bridge has not answered for."""
    wanted = {move.destination.place: move for move in planned}
    toward: dict[tuple[int, str], list[MoveUnderWay]] = {}
    for move in under_way:
        toward.setdefault(move.destination, []).append(move)
    found = []
    for position in positions:
        text = _trouble(
            position,
            wanted.get(position.place),
            toward.get(position.place, []),
            refused=refused,
            silent=silent,
            bound=stalled_after_seconds,
        )
        if text is not None:
            found.append(Trouble(position.chain_id, position.symbol, text))
    return found


def _trouble(
    position: Position,
    wanted: PlannedMove | None,
    moves: Sequence[MoveUnderWay],
    *,
    refused: Mapping[Route, str],
    silent: Mapping[Route, Silence],
    bound: float,
) -> str | None:
    for move in moves:
        quiet = silent.get(move.route)
        if quiet is not None and quiet.seconds > bound:
            return _unavailable(move.route, quiet)
        if move.age_seconds > bound:
            return (
                f"the move from chain {move.route[0]} has been {move.status} for "
                f"{move.age_seconds:.0f} s, beyond {bound:.0f} s"
            )
    if moves or position.virtual >= position.levels.minimum:
        return None
    if wanted is None:
        return f"below its minimum, and no chain holds a surplus of {position.symbol} to spare"
    route = (wanted.origin.chain_id, position.chain_id, position.symbol)
    if route in refused:
        return f"below its minimum; the move from chain {route[0]} was refused: {refused[route]}"
    quiet = silent.get(route)
    if quiet is not None and quiet.seconds > bound:
        return _unavailable(route, quiet)
    return None


def _unavailable(route: Route, silence: Silence) -> str:
    return (
        f"the bridge or a chain has not answered for the move from chain {route[0]} for "
        f"{silence.seconds:.0f} s: {silence.reason}"
    )
