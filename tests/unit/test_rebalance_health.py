"""What stands in the rebalancer's way (`domain.rebalance_health`): a chain below its minimum
whose move was refused or that no chain can refill, and a move toward it silent or under way
beyond the bound; nothing for a chain within its levels or a move young enough."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from crossfill.domain.rebalance_health import MoveUnderWay, Route, Silence, troubles
from crossfill.domain.rebalancing import Levels, Position, planned_moves

ETH = "0x0000000000000000000000000000000000000000"
LEVELS = Levels(minimum=5, target=20, maximum=50)
BOUND = 300.0


def _at(chain_id: int, free: int) -> Position:
    return Position(chain_id, ETH, "ETH", free, 0, 0, LEVELS)


def _found(
    positions: Sequence[Position],
    *,
    under_way: Sequence[MoveUnderWay] = (),
    refused: Mapping[Route, str] | None = None,
    silent: Mapping[Route, Silence] | None = None,
) -> dict[int, str]:
    busy = [move.destination for move in under_way]
    planned = planned_moves(positions, busy)
    found = troubles(
        positions,
        planned,
        under_way,
        refused=refused or {},
        silent=silent or {},
        stalled_after_seconds=BOUND,
    )
    assert all(trouble.symbol == "ETH" for trouble in found)
    return {trouble.chain_id: trouble.text for trouble in found}


def _toward(destination: int, *, age: float, status: str = "sent") -> MoveUnderWay:
    return MoveUnderWay((1, destination, "ETH"), (destination, ETH), status, age)


def test_nothing_while_every_chain_is_within_its_levels_or_being_refilled() -> None:
    assert _found([_at(1, 30), _at(2, 10)]) == {}
    assert _found([_at(1, 30), _at(2, 2)]) == {}  # its move can start now
    assert _found([_at(1, 30), _at(2, 2)], under_way=[_toward(2, age=BOUND - 1)]) == {}


def test_a_chain_below_its_minimum_that_no_chain_can_refill_is_shown() -> None:
    found = _found([_at(1, 20), _at(2, 2)])  # chain 1 is at its target: nothing to spare
    assert found == {2: "below its minimum, and no chain holds a surplus of ETH to spare"}


def test_a_chain_below_its_minimum_whose_move_was_refused_is_shown_with_why() -> None:
    refused = {(1, 2, "ETH"): "refused by the bridge: INSUFFICIENT_LIQUIDITY too much"}
    found = _found([_at(1, 30), _at(2, 2)], refused=refused)
    assert found == {
        2: "below its minimum; the move from chain 1 was refused: refused by the bridge: "
        "INSUFFICIENT_LIQUIDITY too much"
    }
    # Refused, but the chain is within its levels again: nothing stands in the way.
    assert _found([_at(1, 30), _at(2, 6)], refused=refused) == {}


def test_a_silent_bridge_is_shown_only_beyond_the_bound() -> None:
    route = (1, 2, "ETH")
    young = {route: Silence(BOUND - 1, "connection refused")}
    old = {route: Silence(BOUND + 1, "connection refused")}
    assert _found([_at(1, 30), _at(2, 2)], silent=young) == {}
    assert _found([_at(1, 30), _at(2, 2)], silent=old) == {
        2: "the bridge or a chain has not answered for the move from chain 1 for 301 s: "
        "connection refused"
    }
    # A move under way toward the chain, its status unanswered as long.
    assert (
        "has not answered"
        in _found([_at(1, 30), _at(2, 2)], under_way=[_toward(2, age=10)], silent=old)[2]
    )


def test_a_move_under_way_beyond_the_bound_is_stalled_whatever_the_levels() -> None:
    found = _found([_at(1, 30), _at(2, 10)], under_way=[_toward(2, age=BOUND + 60)])
    assert found == {2: "the move from chain 1 has been sent for 360 s, beyond 300 s"}
