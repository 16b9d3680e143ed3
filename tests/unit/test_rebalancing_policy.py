"""The rebalancer's policy (`domain.rebalancing`): which moves, how much, what is in transit
counted, and which chains have their repayments steered."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from crossfill.domain.rebalancing import (
    Levels,
    Position,
    fee_in_origin_units,
    planned_moves,
    steered,
)
from crossfill.domain.repayments import BatchRules, Owed, batches_due
from crossfill.store.rebalancing import bridge_step
from crossfill.treasury.intents_api_bridge import step_purpose

ETH = "0x0000000000000000000000000000000000000000"
USDC_A = "0x00000000000000000000000000000000000000AA"
USDC_B = "0x00000000000000000000000000000000000000bb"
LEVELS = Levels(minimum=5, target=20, maximum=50)


def _at(
    chain_id: int,
    free: int,
    *,
    in_transit: int = 0,
    owed: int = 0,
    currency: str = ETH,
    symbol: str = "ETH",
) -> Position:
    return Position(chain_id, currency, symbol, free, in_transit, owed, LEVELS)


def _moves(
    *positions: Position, busy: Sequence[tuple[int, str]] = ()
) -> list[tuple[int, int, int]]:
    return [
        (move.origin.chain_id, move.destination.chain_id, move.amount)
        for move in planned_moves(positions, busy)
    ]


def test_levels_in_whole_units_become_smallest_units() -> None:
    levels = Levels.of_units(Decimal("0.5"), Decimal(20), Decimal("50.25"), 6)
    assert levels == Levels(500_000, 20_000_000, 50_250_000)


def test_a_chain_below_its_minimum_is_refilled_to_target_from_the_most_surplus() -> None:
    assert _moves(_at(1, 30), _at(2, 2), _at(3, 45)) == [(3, 2, 18)]


def test_the_amount_is_at_most_the_surplus_over_target() -> None:
    assert _moves(_at(1, 26), _at(2, 0)) == [(1, 2, 6)]


def test_surplus_is_what_is_free_now_beyond_the_minimum_not_what_is_owed() -> None:
    # 40 over target on paper, but only 8 free: 3 can leave, the minimum (5) stays.
    assert _moves(_at(1, 8, owed=52), _at(2, 0)) == [(1, 2, 3)]
    assert _moves(_at(1, 5, owed=55), _at(2, 0)) == []


def test_nothing_moves_while_every_chain_is_within_its_levels() -> None:
    assert _moves(_at(1, 20), _at(2, 5), _at(3, 50)) == []


def test_in_transit_and_owed_count_toward_the_virtual_balance() -> None:
    assert _moves(_at(1, 40), _at(2, 1, in_transit=4)) == []
    assert _moves(_at(1, 40), _at(2, 1, owed=4)) == []
    # Owed counts: only what repayment will not bring is bridged.
    assert _moves(_at(1, 40), _at(2, 1, owed=3)) == [(1, 2, 16)]


def test_a_chain_with_a_move_under_way_is_neither_refilled_nor_drained_again() -> None:
    assert _moves(_at(1, 40), _at(2, 0), busy=[(2, ETH)]) == []
    assert _moves(_at(1, 40), _at(2, 0), busy=[(1, ETH)]) == []
    assert _moves(_at(1, 40), _at(2, 0), _at(3, 30), busy=[(1, ETH.upper())]) == [(3, 2, 10)]


def test_one_source_refills_one_chain_per_round() -> None:
    moves = _moves(_at(1, 100), _at(2, 0), _at(3, 1))
    assert moves == [(1, 2, 20)]


def test_a_chain_above_its_maximum_sends_its_surplus_to_the_chain_most_below_target() -> None:
    assert _moves(_at(1, 60), _at(2, 15), _at(3, 10)) == [(1, 3, 10)]
    assert _moves(_at(1, 60), _at(2, 20)) == []


def test_moves_stay_within_one_currency_by_symbol() -> None:
    usdc_short = _at(2, 0, currency=USDC_B, symbol="USDC")
    assert _moves(_at(1, 40), usdc_short) == []
    usdc_rich = _at(1, 40, currency=USDC_A, symbol="USDC")
    assert _moves(_at(1, 40), usdc_short, usdc_rich, _at(2, 20)) == [(1, 2, 20)]


def test_steering_repays_a_chain_whose_inventory_without_repayments_is_below_target() -> None:
    assert steered(_at(2, 10, owed=30))
    assert steered(_at(2, 10, in_transit=9, owed=30))
    assert not steered(_at(2, 10, in_transit=10))
    assert not steered(_at(2, 25, owed=30))


def test_the_bridge_fee_in_origin_units() -> None:
    assert fee_in_origin_units(1000, 990, 18, 18) == 10
    assert fee_in_origin_units(1_000_000, 990, 6, 3) == 10_000
    assert fee_in_origin_units(1000, 990_000, 3, 6) == 10


def test_a_steered_deposit_sends_its_batch_at_once() -> None:
    now = datetime(2026, 11, 29, tzinfo=UTC)
    rules = BatchRules(size=20, max_age=timedelta(seconds=600), min_value_usd_micros=10**12)
    waiting = [Owed(1, 5, now), Owed(2, 5, now)]
    assert batches_due(waiting, rules, now=now) == []
    steered_one = [Owed(1, 5, now), Owed(2, 5, now, urgent=True)]
    assert batches_due(steered_one, rules, now=now) == [steered_one]


def test_a_bridge_steps_journal_purpose_names_its_move_and_step() -> None:
    assert bridge_step(step_purpose("0xabc:def", 1)) == ("0xabc:def", 1)
    assert bridge_step("gas-top-up:1:0xabc") is None
    assert bridge_step("bridge:0xabc:x") is None
